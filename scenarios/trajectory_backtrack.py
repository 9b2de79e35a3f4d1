"""Backtrack path: step 3's refinement still fails, so BRSD reverts to step 2,
which the target redoes, and drafting resumes at step 3."""

from _show import show

from cosim.trace import TrajectoryBuilder

problem = (
    TrajectoryBuilder("backtrack", prompt_tokens=100)
    .accept(64)
    .accept(52)
    .reject(40)
    .refine_fails(30)
    .backtrack()
    .refine(55)
    .accept(45)
    .build()
)
show([problem], __doc__)
