"""Mixed: all three paths in one problem, plus a second backtrack two steps deep."""

from _show import show

from cosim.trace import TrajectoryBuilder

problem = (
    TrajectoryBuilder("mixed", prompt_tokens=120, answer_correct=True)
    .accept(64)
    .reject(50).refine(70)
    .accept(36)
    .reject(44).refine_fails(38).backtrack()   # step 4 fails: back to step 3
    .refine_fails(41).backtrack()              # the redone step 3 fails too: back to step 2
    .refine(66)                                # step 2 redone
    .accept(30).accept(28).accept(90)
    .build()
)
show([problem], __doc__)
