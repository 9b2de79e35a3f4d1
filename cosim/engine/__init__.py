"""The run plumbing: how a scenario and a trace become one native engine run.

``_workflow`` builds the description the engine takes and the result; ``_serving_sections``
adds the serving cluster's sections; ``_preflight`` checks limits before anything is
allocated; ``_run_session`` makes the run with its outputs (waveform, timeline);
``_engine_run`` streams the trace in and the rows out; ``_isolation`` runs each simulation
in a process of its own; ``_row_sinks`` keeps the rows in memory or on disk."""
