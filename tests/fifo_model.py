"""A small discrete-event model of a serving cluster, written from the queueing rules of
docs/serving.md ("How a cluster serves requests") alone, for gpu-baseline clusters without
batching: each request's work is a chain of jobs and PCIe sends, each started when the one
before it ends (the system is strictly sequential).

What a request does, and how long each piece takes, is read from the single-request system
(cosim.simulate with activities): that run involves no queueing. Everything a cluster adds
is modelled here: the dispatcher (requests in trace order to the lowest-numbered idle
slot), the slot's bound devices (slot s: draft s mod D, PRM s mod P, target s mod T), FIFO
devices (a job enters its device's queue when it is ready; the device takes the job ready
first), links that book a transfer's time when it is posted (from its ready time on, the
direction's free time around what was booked before, until it has had its duration), a
send between two devices as two legs posted together, and the slot released when the
answer settles. Times are whole picoseconds, as the engine's."""

import heapq
from bisect import bisect_right
from dataclasses import dataclass, field

import cosim

PS_PER_NS = 1000
DEVICES = ("draft", "prm", "target")


def ps(ns):
    """A time the engine reported in ns (a whole number of ps / 1000) back in ps."""
    return int(round(ns * PS_PER_NS))


@dataclass
class Stage:
    kind: str            # "job" (a device), "leg" (one PCIe leg), "send" (two legs posted together)
    parts: list          # job: [(device, ps)]; leg/send: [(link role, direction, ps)], in order
    end_ps: int = 0      # when it ended in the single-request run (relative to its problem's start)


@dataclass
class Chain:
    stages: list = field(default_factory=list)
    settles: int = -1    # the stage whose end settles the answer; later ones are posted at that moment


def chains(scn, trace):
    """Each problem's work as the cluster queues it, from a single-request run."""
    run = cosim.simulate(scn, trace, activities=True)
    starts = [ps(s * 1e9) for s in run.per_problem.column("start_s")]
    ends = [ps(s * 1e9) for s in run.per_problem.column("end_s")]
    by_problem = {}
    for a in run.activities:
        by_problem.setdefault(a.problem, []).append(a)
    out = []
    for i in range(len(trace)):
        acts = sorted(by_problem[i], key=lambda a: (a.start_ns, a.end_ns))
        chain, at = Chain(), starts[i]
        for a in acts:
            start, end = ps(a.start_ns), ps(a.end_ns)
            # Strictly sequential: each piece begins the moment the one before it ended.
            assert start == at, f"problem {i}: {a.kind} on {a.device} starts at {start} ps, not at {at}"
            at = end
            last = chain.stages[-1] if chain.stages else None
            if a.device in DEVICES:
                if last is not None and last.kind == "job" and last.parts[-1][0] == a.device:
                    last.parts.append((a.device, end - start))  # the same device at once: one job
                    last.end_ps = end - starts[i]
                else:
                    chain.stages.append(Stage("job", [(a.device, end - start)], end - starts[i]))
                continue
            role = a.device.removeprefix("pcie_")
            direction = "h2d" if a.kind == "transfer_h2d" else "d2h"
            # Data between two devices goes through the host in two legs posted together; a
            # PRM's verdict goes to the host only, and a command comes from the host only.
            if (direction == "h2d" and last is not None and last.kind == "leg"
                    and last.parts[0][1] == "d2h" and last.parts[0][0] != "prm"):
                last.kind = "send"
                last.parts.append((role, direction, end - start))
                last.end_ps = end - starts[i]
            else:
                chain.stages.append(Stage("leg", [(role, direction, end - start)], end - starts[i]))
        settle = [k for k, s in enumerate(chain.stages) if s.end_ps == ends[i] - starts[i]]
        assert settle, f"problem {i}: no piece of work ends when its answer settles"
        chain.settles = settle[0]
        assert all(s.kind != "job" for s in chain.stages[chain.settles + 1:]), "device work after the answer"
        out.append(chain)
    return out


class Direction:
    """One direction of a link: the busy time booked so far, as sorted disjoint intervals."""

    def __init__(self):
        self.starts, self.ends = [], []

    def book(self, ready, duration):
        """Takes `duration` of free time from `ready` on, around earlier bookings: (start, end)."""
        t, left, start, pieces = ready, duration, None, []
        k = bisect_right(self.starts, t) - 1
        if k < 0 or self.ends[k] <= t:
            k += 1
        while True:
            while k < len(self.starts) and self.starts[k] <= t:  # booked at t: go on from its end
                t = max(t, self.ends[k])
                k += 1
            if start is None:
                start = t
            if left == 0:
                break
            take = left if k == len(self.starts) else min(left, self.starts[k] - t)
            pieces.append((t, t + take))
            left -= take
            t += take
        for a, b in pieces:
            j = bisect_right(self.starts, a)
            self.starts.insert(j, a)
            self.ends.insert(j, b)
        return start, t


def serve(chains_, arrivals_ps, draft, contexts, prm, target):
    """The slot, start and end (ps) of every request on a cluster of `draft` GPUs holding
    `contexts` requests each, `prm` PRM GPUs and `target` target GPUs, none batching."""
    slots = draft * contexts
    bound = [{"draft": s % draft, "prm": s % prm, "target": s % target} for s in range(slots)]
    events, seq = [], [0]

    def at(t, action, *args):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], action, args))

    idle = set(range(slots))
    next_request = [0]
    slot_of, start, end = {}, {}, {}
    queues = {}      # device -> heap of (ready, seq, request, stage, duration)
    busy_until = {}  # device -> when its current job ends (absent: free)
    links = {}       # (role, index, direction) -> Direction

    def dispatch(t):
        while next_request[0] < len(chains_) and arrivals_ps[next_request[0]] <= t and idle:
            r = next_request[0]
            next_request[0] += 1
            s = min(idle)
            idle.remove(s)
            slot_of[r], start[r] = s, t
            stage(t, r, 0)

    def device(r, name):
        return (name, bound[slot_of[r]][name])

    def link(r, role, direction):
        key = (role, bound[slot_of[r]][role], direction)
        return links.setdefault(key, Direction())

    def stage(t, r, k):
        """Request r's stage k is ready at t (the one before it ended then)."""
        chain = chains_[r]
        if k == chain.settles + 1:  # the answer settled: the slot is free, the rest is posted now
            end[r] = t
            idle.add(slot_of[r])
            for later in chain.stages[k:]:
                post(t, r, later)
            dispatch(t)
            return
        s = chain.stages[k]
        if s.kind == "job":
            dev = device(r, s.parts[0][0])
            seq[0] += 1
            heapq.heappush(queues.setdefault(dev, []), (t, seq[0], r, k, sum(p[1] for p in s.parts)))
            start_next(t, dev)
        else:
            at(post(t, r, s), stage, r, k + 1)

    def post(t, r, s):
        """Posts a leg, or both legs of a send, at t; returns when the data has arrived."""
        ready = t
        for role, direction, duration in s.parts:
            ready = link(r, role, direction).book(ready, duration)[1]
        return ready

    def start_next(t, dev):
        if busy_until.get(dev, -1) > t or not queues.get(dev):
            return
        _, _, r, k, duration = heapq.heappop(queues[dev])
        busy_until[dev] = t + duration
        at(t + duration, finish, dev, r, k)

    def finish(t, dev, r, k):
        stage(t, r, k + 1)
        start_next(t, dev)

    for r, arrival in enumerate(arrivals_ps):
        at(arrival, lambda t: dispatch(t))
    while events:
        t, _, action, args = heapq.heappop(events)
        action(t, *args)
    return slot_of, start, end
