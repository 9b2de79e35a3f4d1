"""Refine path: step 2's draft is rejected and the target's refinement is kept."""

from _show import show

from cosim.trace import TrajectoryBuilder

problem = TrajectoryBuilder("refine", prompt_tokens=100).accept(64).reject(50).refine(70).accept(40).build()
show([problem], __doc__)
