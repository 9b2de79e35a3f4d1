"""Sampling intervals of a run's metrics (a bootstrap over problems or requests): plain
statistics over result columns, below the engine, so that a Result can give its own
(cosim.uncertainty re-exports them)."""
