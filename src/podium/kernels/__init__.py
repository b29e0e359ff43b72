"""Each model's compiled math, below the model classes and the replay engine (``docs/design.md``, "The kernels
layer"): numba functions over the columnar form of :class:`podium.Matches` and the population's state arrays.

A model class in :mod:`podium.models` hands its kernel to the engine through ``Model._replay``; nothing here
imports a model, the engine or anything above the ordering engine.  Import the modules themselves
(``podium.kernels.elo``, ...): this package imports nothing, so that loading one model's kernels loads no other's.
"""
