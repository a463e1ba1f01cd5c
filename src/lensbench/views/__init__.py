"""Readers across benchmarks, above them: leaderboard, ``compare``, the viewer, figures over runs and the
``reproduce`` engine. They find a run's benchmark through the registry (:mod:`.catalog`); what a benchmark
uses to describe itself (tables, notes, paper declarations, plot helpers) lies below, in :mod:`lensbench.report`."""
