"""The report's sections, one builder per module: each takes the ``Inputs`` and returns its
``Section`` of the one Report model, or None when it has nothing to measure. ``report/build.py``
lists them in the order a reader meets them; a new section (evaluation, federated learning,
data-subject rights, latent masking) is one module here and one line there."""
