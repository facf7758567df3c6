"""Federated learning: parties train one model without sharing rows."""
