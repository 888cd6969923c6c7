"""Concept checks of lessons 01_to_05a: see :mod:`.model`."""

from __future__ import annotations

from .model import Choice, Question

QUESTIONS: tuple[Question, ...] = (
    # ------------------------------------------------ 01 Global state without a global clock
    Question(
        "01.1",
        "In `clock-drift` each process records when its own clock reads 3 (12:00), and the "
        "record holds two tokens where there is one. Would better-synchronised clocks fix this?",
        (
            Choice(
                "Yes: clocks kept within a few milliseconds of each other give a consistent "
                "record on any network.",
                False,
                "A message can take less than a few milliseconds. Sent just after the sender's "
                "12:00, it can arrive before the receiver's clock reads 12:00, and the record "
                "holds an effect without its cause.",
            ),
            Choice(
                "Only while any two clocks agree more closely than the shortest time a message "
                "takes between them.",
                True,
                "Right: a message sent just after its sender's 12:00 must not arrive before the "
                "receiver's 12:00. In `clock-drift` a rate of 0.75 for `P2` is just enough; "
                "nothing promises such agreement in general.",
            ),
            Choice(
                "No: in `clock-drift` no rate of `P2`'s clock gives a consistent record, however "
                "close to `P1`'s.",
                False,
                "Try it: with `P2`'s clock at `P1`'s rate the record is consistent. The "
                "question is not whether clocks can work, but what they must promise.",
            ),
            Choice(
                "Yes, and then messages need no timestamps: each process just saves its state "
                "at 12:00.",
                False,
                "Without timestamps a message sent before 12:00 and still on its way would be "
                "in nobody's record: sent but never received, the mirror image of the two "
                "tokens.",
            ),
        ),
        hint='Reread "Why clocks are not enough": what must two clocks agree on more closely than?',
        misconception="better-synchronised clocks make recording at 12:00 safe",
    ),
    Question(
        "01.2",
        "Message `m` is sent inside a cut and received outside it. Does `m` make the cut "
        "inconsistent?",
        (
            Choice(
                "Yes: in a consistent cut no message crosses the cut, in either direction.",
                False,
                "Only an effect without its cause breaks a cut: a receive inside whose send is "
                "outside. Check which way `m` crosses.",
            ),
            Choice(
                "Yes, unless `m` is received before the snapshot's parts are put together.",
                False,
                "Consistency is a property of the cut, not of when its parts are collected: "
                "what matters is whether a receive inside the cut has its send outside.",
            ),
            Choice(
                "It depends on the clocks: it does only if `m` was sent after 12:00.",
                False,
                "Happens-before decides consistency, with no clock at all: where the send and "
                "the receive of each message lie, inside or outside the cut.",
            ),
            Choice(
                "No: `m` was in transit at the cut, and it belongs in its channel's state.",
                True,
                "Right: a message sent inside and received outside was on its way at the cut. "
                "It breaks nothing, but the snapshot must record it in its channel's state, or "
                "it is lost.",
            ),
        ),
        hint='Look at "Consistent and inconsistent cuts": which direction of a message breaks '
        "a cut?",
        misconception="a consistent cut is one where no messages are in flight",
    ),
    Question(
        "01.3",
        "In the small run of lesson 01, L(b1) = 1 and L(a2) = 2. What do these two Lamport times "
        "tell you about `b1` and `a2`?",
        (
            Choice(
                "Only that `a2` does not happen before `b1`; whether `b1` → `a2` they cannot tell.",
                True,
                "Right: the clock condition runs one way. If e → f then L(e) < L(f), not "
                "conversely; here `b1` and `a2` are in fact concurrent, as their vector clocks "
                "show.",
            ),
            Choice(
                "`b1` happens before `a2`: a cause always has a smaller Lamport time than its "
                "effect.",
                False,
                "That reads the clock condition backwards: a cause has a smaller time than its "
                "effect, but not every smaller time belongs to a cause. No walk leads from `b1` "
                "to `a2`.",
            ),
            Choice(
                "They are concurrent: events with different Lamport times are never causally "
                "related.",
                False,
                "Causally related events always have different times: c1 → a4, with L(c1) = 1 "
                "and L(a4) = 4. Differing times say nothing about concurrency.",
            ),
            Choice(
                "Nothing: Lamport times only serve to order requests for a shared resource.",
                False,
                "The clock condition ties them to cause and effect as well; the total order "
                "that grants a shared resource is one use of them, not their only meaning.",
            ),
        ),
        hint='See "What one number cannot tell": does the clock condition work in both directions?',
        misconception="a smaller Lamport time means happens-before",
    ),
    Question(
        "self.01",
        "A record of two bank branches shows `P2` has received £100 from `P1`, while `P1`'s "
        "recorded balance still holds the £100. What is this record?",
        (
            Choice(
                "A consistent cut: the £100 was simply in transit between the branches when they "
                "recorded.",
                False,
                "In transit means sent inside the cut and received outside it. Here the receipt "
                "is inside and the send outside: the opposite direction.",
            ),
            Choice(
                "A state the system was in for a moment, between the transfer's send and its "
                "receipt.",
                False,
                "At no moment was the £100 both still at `P1` and already at `P2`: before the "
                "send only `P1` had it, after the receipt only `P2`.",
            ),
            Choice(
                "Inconsistent: a receipt inside whose send is outside, so the £100 is counted "
                "twice.",
                True,
                "Right: the record holds an effect without its cause, a state the system could "
                "never be in. `clock-drift` does the same with a token: two where there is one.",
            ),
            Choice(
                "A consistent cut, provided `P1`'s clock was a little behind `P2`'s when the two "
                "recorded.",
                False,
                "Clocks cannot make a cut consistent: consistency is about happens-before. With "
                "the receipt recorded and the send not, no clock reading repairs it.",
            ),
        ),
        hint='Lesson 01, "Consistent and inconsistent cuts": which message breaks a cut, and '
        "in which direction?",
        misconception="any set of recorded local states is a state the system was in",
        lesson="01",
    ),
    # ----------------------------------------------------- 02 Chandy–Lamport step by step
    Question(
        "02.1",
        "`P1` is recording channel `P3->P1` when message `y` arrives on it. What happens to `y`?",
        (
            Choice(
                "`P1` keeps a copy of `y` for the channel's state, and `y` is delivered to `P1` "
                "as usual.",
                True,
                "Right: recording a message is keeping a copy of it. `P1`'s current state goes "
                "from 7 to 10 when `y` arrives, and `y(3)` is the recorded state of `P3->P1`.",
            ),
            Choice(
                "`P1` holds `y` back, unread, until the marker on `P3->P1` arrives, then takes it.",
                False,
                "No rule of Chandy–Lamport holds a channel back: the run goes on while the "
                "snapshot is taken, and nothing waits for a marker.",
            ),
            Choice(
                "`P1` stores `y` in the channel's state instead of delivering it, so it is not "
                "counted twice.",
                False,
                "A message recorded and never delivered would take its 3 tokens out of the "
                "running system for good: the snapshot would add up to 60, the system after it "
                "would not.",
            ),
            Choice(
                "`P1` discards `y`: it arrived after `P1` recorded, so it belongs to no recorded "
                "state.",
                False,
                "Discarding it would lose 3 tokens from the run and the snapshot. `y` was sent "
                "before `P3` recorded and arrived after `P1` did: it was in transit across the "
                "cut.",
            ),
        ),
        hint='Lesson 02, "Rule 3": look at `P1`\'s *now* column before and after `y` arrives.',
        misconception="recording a channel holds its messages back from the process",
    ),
    Question(
        "02.2",
        "In `02-never-occurred` the snapshot records `P1` with no token, `P2` with its own and "
        "`b` in transit. Was the system ever in that state?",
        (
            Choice(
                "Yes: a snapshot records the state at the moment its initiator records.",
                False,
                "When `P2` started `s1` both processes held their token and nothing was in "
                "transit: that is not the recorded state.",
            ),
            Choice(
                "No, so this snapshot is wrong: the marker algorithm failed on this run.",
                False,
                "The engine finds the cut consistent and every channel state right. The "
                "algorithm never promised a state that occurred, so nothing failed.",
            ),
            Choice(
                "No, but it could have been, had `P1` sent `b` before `P2` sent `a`.",
                True,
                "Right: the sends of `a` and `b` are independent. In the run where `b` goes "
                "first, the system passes through exactly the recorded state: a state it could "
                "have been in.",
            ),
            Choice(
                "Yes: it is the state just after `P1` sent `b`, with both tokens on their way.",
                False,
                "Just after `P1` sent `b`, `a` was on the wire too and `P2` had 0 tokens. The "
                "recorded state has `P2` holding its own token and only `b` in transit.",
            ),
        ),
        hint="Compare the last line of the states table with every moment above it.",
        misconception="the snapshot is a state the system was in",
    ),
    Question(
        "02.3",
        "Which of these is true of a process that starts a Chandy–Lamport snapshot?",
        (
            Choice(
                "It must be a designated coordinator; no other process may start a snapshot.",
                False,
                "Nothing in the four rules names a coordinator: rule 1 reads the same for every "
                "process. The parts are collected in one place, but that says nothing of who "
                "starts.",
            ),
            Choice(
                "It finishes its part first, since it recorded its state before any other.",
                False,
                "In the lesson's run `P1` started `s1` and finished last, at action 15: a part "
                "is done when a marker has come in on every input, whoever recorded first.",
            ),
            Choice(
                "It must stop sending application messages until its own part is done.",
                False,
                "Right after starting `s1`, `P1` sends `b` to `P2`. Its markers go out before "
                "anything else on each channel; after that it sends as usual.",
            ),
            Choice(
                "Any process may start one, and several may start the same snapshot.",
                True,
                "Right: rule 1 is the same for every process. In `02-two-initiators` `P1` and "
                "`P3` both start `s1`, and the one snapshot is complete and consistent.",
            ),
        ),
        hint='Lesson 02: the end of "Rule 4", and "Several initiators, several snapshots".',
        misconception="the initiator must be a special process",
    ),
    Question(
        "self.02",
        "`P2` has recorded its state. On channel `P1->P2` there then arrive `u`, `v`, `P1`'s "
        "marker and `w`, in that order. What is the recorded state of `P1->P2`?",
        (
            Choice(
                "`u`, `v`, `w`: every message that arrived on it after `P2` recorded its state.",
                False,
                "Recording a channel stops at its marker. `w` travels behind it, so `P1` sent "
                "it after recording: it belongs after the snapshot.",
            ),
            Choice(
                "`u`, `v`: what arrived after `P2` recorded and before the channel's marker.",
                True,
                "Right: `u` and `v` travel ahead of the marker, so `P1` sent them before it "
                "recorded, and they reached `P2` after it recorded: they were in transit.",
            ),
            Choice(
                "Empty: the channel a marker comes on is always recorded empty, first marker or "
                "not.",
                False,
                "Only a first marker closes its channel empty. `P2` had recorded already, so "
                "this is a later marker: rule 3 applies, not rule 2.",
            ),
            Choice(
                "`w` alone: the messages behind the marker are the ones that were in transit.",
                False,
                "`w` is behind the marker, so `P1` sent it after recording: it lies in the "
                "future of the cut, not in transit across it.",
            ),
        ),
        hint="Lesson 02, rules 2 and 3: when does a process start and stop recording a channel?",
        misconception="a channel's state is what arrives after its marker",
        lesson="02",
    ),
    # -------------------------------------------------------------- 03 The worked example
    Question(
        "03.1",
        "In the worked example, message `H` is recorded on C21. Is its receive event `D` part "
        "of `P1`'s recorded state?",
        (
            Choice(
                "Yes: a message recorded in a channel's state has its receipt recorded as well.",
                False,
                "Then `H` would be counted twice: in C21's state and as received by `P1`. With "
                "the token on `H`, the snapshot would show two tokens.",
            ),
            Choice(
                "No: `P1` recorded at click 4; `D` follows `C`, which `P1` did after recording.",
                True,
                "Right: a recorded state is a prefix of the process's history, here `A`, `B`. "
                "`D` happened at click 13, and `C`, which happens before `D`, is not recorded "
                "either.",
            ),
            Choice(
                "Yes: `D` happened while the snapshot was still being taken, before its last "
                "marker.",
                False,
                "A process records its state at one moment; what it does afterwards, while the "
                "markers travel, is not part of that state.",
            ),
            Choice(
                "No: receive events are never part of a recorded process state.",
                False,
                "`P2`'s recorded state is `F`, `G`, `H`, and `F` and `G` are receives. A "
                "receive is recorded when it happens before its process records.",
            ),
        ),
        hint='Lesson 03, "Why D is not part of P1\'s recorded state": what happens before `D`?',
        misconception="the receipt of a message recorded in transit is recorded too",
    ),
    Question(
        "03.2",
        "In the worked example `P1`'s marker to `P2` is slow. When, and on which marker, does "
        "`P2` record its state?",
        (
            Choice(
                "At click 12, on `P1`'s marker: a process records only on the initiator's marker.",
                False,
                "Any first marker makes a process record, whoever sent it. By click 12 `P2` "
                "had recorded already; `P1`'s marker only closes C12.",
            ),
            Choice(
                "At click 4, when `P1` starts the snapshot, since every process records at once.",
                False,
                "Nothing tells `P2` at click 4 that a snapshot has begun: only a marker can, "
                "and none has reached it. `P2` still does `F`, `G` and `H` after click 4.",
            ),
            Choice(
                "At click 11, on `P3`'s marker, its first: it records `F`, `G` and `H`.",
                True,
                "Right: a first marker from any process makes a process record. `P3`'s marker "
                "arrives before `P1`'s slow one, so `P2` records `F`, `G`, `H` and closes C32 "
                "empty.",
            ),
            Choice(
                "At click 11, recording `F` and `G` only: `H`, a send to a red `P1`, is left out.",
                False,
                "A recorded state is everything the process did before recording, whomever it "
                "sent to. `H` happened at click 10.",
            ),
        ),
        hint="Lesson 03, click 11: which marker is the first to reach `P2`?",
        misconception="a process records when the initiator's marker reaches it",
    ),
    Question(
        "03.3",
        "In the token version of the worked example, `H` carries the token from `P2` to `P1`. "
        "Where is the token in the recorded process states alone?",
        (
            Choice(
                "Nowhere: `P2` recorded after giving it away, `P1` before getting it.",
                True,
                "Right: the process states alone hold no token. Only C21's recorded state, "
                "message `H`, shows it in transit; with the channels the snapshot holds exactly "
                "one.",
            ),
            Choice(
                "At `P2`: a token is counted where it was when the snapshot started.",
                False,
                "`P2` recorded after `H`, when it had already given the token away: its "
                "recorded state holds none.",
            ),
            Choice(
                "At `P1`: `P1` received `H`, so its recorded state holds the token.",
                False,
                "`P1` received `H` at `D`, long after it recorded at click 4: its recorded "
                "state holds no token.",
            ),
            Choice(
                "At both: one process sent it and the other received it, so it is counted twice.",
                False,
                "Counting it at `P1` would need `P1` to have recorded after `D`, but `P1` "
                "recorded at click 4, long before `D`.",
            ),
        ),
        hint='Lesson 03, "Why record channels at all?": count the tokens with and without the '
        "channel states.",
        misconception="a snapshot need only record the processes",
    ),
    Question(
        "self.03",
        "Replay the worked example with one change: `P1` starts the snapshot right after `C` "
        "instead of right after `B`. What is the recorded state of C21?",
        (
            Choice(
                "Empty: `C` is now recorded, so `D`, which follows it, is recorded as well.",
                False,
                "`P1`'s recorded state now ends at `C`; `D` still happens after `P1` records, "
                "so it is not part of that state.",
            ),
            Choice(
                "`H` and `E`: both are messages `P1` deals with after it records its state.",
                False,
                "`E` goes out on C13, not C21, and `P1` sends it after recording: it lies after "
                "the cut. A channel's state holds only messages arriving on that channel.",
            ),
            Choice(
                "Empty: a channel into the initiator is always recorded empty.",
                False,
                "By rule 1 the initiator starts recording every input channel when it records; "
                "none is closed empty at once.",
            ),
            Choice(
                "`H`, as before: `P2` sends it before recording, `P1` receives it after.",
                True,
                "Right: the change moves `C` into `P1`'s recorded state but not when `P2` "
                "records, on `P3`'s marker after `H`. `H` still crosses the cut on C21.",
            ),
        ),
        hint="Apply rule 3 to C21: when do `P2` and `P1` record, and when is `H` sent and "
        "received?",
        misconception="a channel into the initiator is recorded empty",
        lesson="03",
    ),
    # ----------------------------------------------------------------- 04 Dijkstra's proof
    Question(
        "04.1",
        "The worked example's snapshot state SSS never occurred during the run. What does "
        "Dijkstra prove about SSS instead?",
        (
            Choice(
                "That SSS is the state of the run at the moment the last process turned red.",
                False,
                "By then `P1` had done `C`, a red action, so that state is not SSS. SSS is "
                "defined from the colours, not taken at one moment of the run.",
            ),
            Choice(
                "That SSS equals `S1`, the state of the run when the snapshot is complete.",
                False,
                "At `S1` every machine has done its red actions too, such as `D` and `E`; SSS "
                "holds each machine's state at its turn to red.",
            ),
            Choice(
                "That SSS is reachable from `S0`, so whatever holds in SSS already held at `S0`.",
                False,
                "Reachable from `S0` means SSS can follow `S0`, not that they agree: a stable "
                "property true at `S0` holds in SSS, not the other way round.",
            ),
            Choice(
                "That SSS lies on a possible run from `S0` to `S1`: enough for stable properties.",
                True,
                "Right: SSS is reachable from `S0` and `S1` from SSS. A stable property that "
                "held at `S0` holds in SSS, and one that holds in SSS holds at `S1`.",
            ),
        ),
        hint='Lesson 04, "What has to be shown": what is asked of SSS, and why is it enough?',
        misconception="a snapshot is right only if its state occurred",
    ),
    Question(
        "04.2",
        "Under Dijkstra's condition, why may a red action directly followed by a white one "
        "always change places?",
        (
            Choice(
                "They are actions of two machines, and the white one accepts nothing the red one "
                "sent.",
                True,
                "Right: actions of different machines interfere only if the first sends the "
                "message the second accepts. What a red action sends is red, and no white "
                "action accepts a red message.",
            ),
            Choice(
                "Any two neighbouring actions can change places without changing where the run "
                "ends.",
                False,
                "Not a send and the receive of its message: in the worked example `F` accepts "
                "the message sent at `I`, so `I` and `F` cannot change places.",
            ),
            Choice(
                "The two happened at the same instant of real time, so their order is arbitrary.",
                False,
                "The model has no real time, only an order of atomic actions; neighbours in it "
                "need not be simultaneous, and some neighbours cannot be swapped at all.",
            ),
            Choice(
                "A red action changes no state until the snapshot is complete, so it can go "
                "anywhere.",
                False,
                "Red actions change state like any other: `D` is red, and in it `P1` receives "
                "`H`. The snapshot never pauses the computation.",
            ),
        ),
        hint='Lesson 04, "Swapping neighbours": when do two neighbouring actions interfere?',
        misconception="any two neighbouring actions may be swapped",
    ),
    Question(
        "04.3",
        "In `clock-drift`, a token sent by a red `P1` is accepted in a white action of `P2`. "
        "Can swapping neighbours give a run through the recorded state?",
        (
            Choice(
                "Yes: enough swaps always move every white action ahead of every red one.",
                False,
                "The acceptance is white and the send red, yet the send must come first in "
                "every run: no swap puts that white action ahead of that red one.",
            ),
            Choice(
                "Yes, once `P2`'s clock is corrected, since the swaps then become legal.",
                False,
                "Swaps are about the order of actions, not clocks: the token's acceptance needs "
                "its send first, whatever any clock reads.",
            ),
            Choice(
                "No: the send precedes the acceptance in every run, so `P1` turns red first.",
                True,
                "Right: the condition is sharp. A red message accepted in a white action fixes "
                "its sender's turn to red before its acceptor's; the record is really wrong, "
                "with two tokens.",
            ),
            Choice(
                "No, but only because this run has two processes; with more, a reordering exists.",
                False,
                "The argument never counts processes: one red message accepted in a white "
                "action fixes the order of two colour changes, in a system of any size.",
            ),
        ),
        hint='Lesson 04, "The condition is sharp": which must come first, the send or the '
        "acceptance?",
        misconception="enough swaps always repair a snapshot",
    ),
    Question(
        "self.04",
        "Dijkstra's condition holds in a run whose computation actions are, in order, white, "
        "red, white, red, white. How many swaps does his reordering make?",
        (
            Choice(
                "2: one for each red action directly followed by a white one.",
                False,
                "Each swap removes one inversion, and an inversion is a red action with a white "
                "one anywhere after it. The first red action comes before two white ones.",
            ),
            Choice(
                "3: one per inversion, a red action with a white one anywhere after it.",
                True,
                "Right: the first red action precedes two white ones, the second one: 3 "
                "inversions. Each swap of a red action with the white one after it removes "
                "exactly one.",
            ),
            Choice(
                "6: one for each pair of actions of different colours, in whichever order.",
                False,
                "A white action before a red one is already in place; only a red action before "
                "a white one is an inversion to remove.",
            ),
            Choice(
                "1: a single swap moves both red actions to the end together.",
                False,
                "A swap exchanges two neighbours only and removes exactly one inversion, so "
                "several inversions take several swaps.",
            ),
        ),
        hint='Lesson 04, "Swapping neighbours": what is an inversion, and how many does one '
        "swap remove?",
        misconception="only neighbouring red and white actions need swapping",
        lesson="04",
    ),
    # ---------------------------------------------------------------- 05a Why FIFO matters
    Question(
        "05a.1",
        "Why does the Chandy–Lamport marker algorithm need channels that deliver messages in "
        "the order sent (FIFO)?",
        (
            Choice(
                "For speed: on FIFO channels markers arrive sooner, so snapshots finish faster.",
                False,
                "FIFO does not make markers faster. Without it the same algorithm records wrong "
                "snapshots: about a third of 200 random runs broke in the lesson, none on FIFO "
                "channels.",
            ),
            Choice(
                "So that every message is delivered exactly once, neither lost nor duplicated.",
                False,
                "Loss and duplication are other failures. The lesson's non-FIFO channels lose "
                "nothing, and its snapshots still break because messages and markers pass each "
                "other.",
            ),
            Choice(
                "So the marker splits each channel: white messages ahead, red ones behind it.",
                True,
                "Right: then a receiver turns red on the marker before any red message reaches "
                "it, and knows when to stop recording the channel. Without FIFO the marker's "
                "position says nothing.",
            ),
            Choice(
                "So that markers can be recorded in the channel states along with the messages.",
                False,
                "Markers belong to the snapshot algorithm and are never recorded. FIFO matters "
                "for the messages around a marker, not for the marker itself.",
            ),
        ),
        hint='Lesson 05a, "What the marker does, and why it needs FIFO": what does the '
        "marker's position tell the receiver?",
        misconception="FIFO is only needed for speed",
    ),
    Question(
        "05a.2",
        "In `05-marker-overtakes-message`, `P1` sends the token `early`, then records; its "
        "marker overtakes `early`. What goes wrong?",
        (
            Choice(
                "`P2` accepts a red message while white, so the token is counted twice.",
                False,
                "`early` was sent before `P1` recorded, so it is white, and `P2` accepts it "
                "after recording. No red message is accepted in a white action here.",
            ),
            Choice(
                "`early` was in transit across the cut, yet no recorded state holds it.",
                True,
                "Right: `P2` records on the marker and closes `P1->P2` empty, as if nothing "
                "white could follow. The snapshot counts 1 token where there are 2.",
            ),
            Choice(
                "Nothing: no red message is accepted in a white action, so the snapshot is right.",
                False,
                "Dijkstra's condition holds and would put `early` in the state of `P1->P2`, but "
                "the recording goes wrong: the tokens recorded do not add up to 2.",
            ),
            Choice(
                "The snapshot never completes: `P2` waits for `early` before closing the channel.",
                False,
                "`P2` cannot know that `early` is coming: it closes the channel on the marker, "
                "and every process finishes its part.",
            ),
        ),
        hint='Lesson 05a, "The marker overtakes a message": what colour is `early`, and when '
        "does `P2` close the channel?",
        misconception="if no red message is accepted in a white action, the snapshot is right",
    ),
    Question(
        "05a.3",
        "On non-FIFO channels, a red message overtakes its channel's marker and reaches a "
        "receiver that has already recorded, on another channel's marker. What happens?",
        (
            Choice(
                "The receiver files it as in transit, and its contents are counted twice.",
                True,
                "Right: the receiver still records that channel, so it records the message; "
                "the sender's recorded state, taken before sending it, counts its contents "
                "too.",
            ),
            Choice(
                "Nothing goes wrong: the receiver is red already, so a red message does no harm.",
                False,
                "Being red does not help: the channel's marker has not come yet, so the "
                "receiver takes what arrives on it for messages sent before the sender "
                "recorded.",
            ),
            Choice(
                "The cut becomes inconsistent: a receive inside the cut whose send is outside.",
                False,
                "The receipt comes after the receiver recorded, so it lies outside the cut "
                "with its send: this message breaks no cut. What goes wrong is in a channel's "
                "state.",
            ),
            Choice(
                "The message is lost: a red receiver ignores messages until the marker arrives.",
                False,
                "Nothing is dropped: every message is delivered to its process, recorded or not.",
            ),
        ),
        hint='Lesson 05a, the end of "The marker overtakes a message": the third way.',
        misconception="a red message reaching a red process is harmless",
    ),
    Question(
        "self.05a",
        "Your marker-based snapshot service passes 100 random test runs on a network that may "
        "reorder messages. What do the tests show?",
        (
            Choice(
                "That its snapshots are right there: 100 runs cover every case that matters.",
                False,
                "In the lesson seeds 0 to 12 all gave right snapshots and seed 13 did not. A "
                "broken run can be rare among random ones and still exist.",
            ),
            Choice(
                "That FIFO is not needed there: a broken snapshot would show up within a few runs.",
                False,
                "Without FIFO the marker's position says nothing about colours, whatever the "
                "tests happened to draw; a break depends on the schedule, not on how many runs "
                "were tried.",
            ),
            Choice(
                "That the network keeps messages in order in practice, or a test would have "
                "failed.",
                False,
                "Runs that happened to deliver in order say nothing of the runs that do not: "
                "the network may still reorder in a schedule no test drew.",
            ),
            Choice(
                "Only that those runs are right: a search of every schedule may still break it.",
                True,
                "Right: random runs can show that the algorithm breaks, never that it cannot. "
                "A search of every schedule of a small non-FIFO system finds a broken run of "
                "eight steps.",
            ),
        ),
        hint='Lesson 05a, "Every run, not 200 random ones": what can random runs show, and '
        "what can a search?",
        misconception="passing random runs shows the snapshots are right",
        lesson="05a",
    ),
)
