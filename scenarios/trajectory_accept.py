"""Accept path: every draft step passes the PRM; the target never runs."""

from _show import show

from cosim.trace import TrajectoryBuilder

problem = TrajectoryBuilder("accept", prompt_tokens=100).accept(64).accept(48).accept(80).build()
show([problem], __doc__)
