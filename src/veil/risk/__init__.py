"""Attacks and risk measures, in one place the scan, the privacy engines, evaluation and the
latent release read:

- ``reidentification``: prosecutor, journalist and marketer risk of a table's classes, and
  risk counted on people (``person_id``);
- ``population``: population uniqueness and journalist risk when the table is a sample
  (Pitman, SNB, Zayatz; sdcMicro's individual risk);
- ``assess``: the scan's risk summary of the quasi-identifiers (from a table or its counts);
- ``distance``: Gower nearest neighbours, and the distance-based privacy of a release (DCR,
  exact copies, membership advantage);
- ``attacks``: singling out, linkability and inference as Anonymeter measures them, with
  intervals;
- ``latent_attacks``: what published latent codes give back (the quasi-identifiers, links,
  membership);
- ``tables``: the aligned training, holdout and release rows the measures read.
"""
