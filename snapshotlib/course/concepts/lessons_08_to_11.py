"""Concept checks of lessons 08_to_11: see :mod:`.model`."""

from __future__ import annotations

from .model import Choice, Question

QUESTIONS: tuple[Question, ...] = (
    # ------------------------------------------------------------------ lesson 08
    Question(
        "08.1",
        "`C1` crashes while checkpoint `c3` is INITIATED, with 3 of its 5 parts done; "
        "`c1` and `c2` are COMPLETED. What does the crash do to the checkpoints?",
        (
            Choice(
                "It corrupts the recorded global state: none of the checkpoints can be trusted.",
                False,
                "Nothing recorded is damaged: the registry holds a checkpoint's parts aside "
                "until it completes, and `c1` and `c2` were complete before `C1` crashed.",
            ),
            Choice(
                "`c3` is kept, and the restore finishes it from the 3 parts already recorded.",
                False,
                "After the crash `c3`'s barriers and recording are gone, so its 2 missing parts "
                "will never be recorded, and a restore needs a checkpoint with all 5 parts.",
            ),
            Choice(
                "`c3` is FAILED and its parts discarded; `c1` and `c2` stay intact.",
                True,
                "Right: a crash fails every unfinished checkpoint and corrupts nothing. The "
                "completed ones are kept, and the restore uses the last of them, `c2`.",
            ),
            Choice(
                "`c2` is FAILED as well, since it had not been used yet when `C1` crashed.",
                False,
                "A COMPLETED checkpoint does not lapse for lack of use: every operator had "
                "finished its part of `c2` before the crash, and what it recorded is kept.",
            ),
        ),
        hint='Compare the registry before and after the crash in the section "A crash".',
        misconception="a crash during a checkpoint corrupts the global state",
    ),
    Question(
        "08.2",
        "A source reads a Kafka partition. For a restore to make it read again from the "
        "right place, what must the source record in a checkpoint?",
        (
            Choice(
                "Its read position: the offset of the next record it will read.",
                True,
                "Right: a restore rewinds the source to that offset and it reads everything "
                "after it again. Flink's Kafka source keeps these offsets in its checkpointed "
                "state.",
            ),
            Choice(
                "The partition's high-water mark: the end of its log as far as it is written.",
                False,
                "A restore from the end of the log would never read the records in between: "
                "restoring the lesson's `c2` from there, `S1` would skip 13 records and `S2` "
                "12.",
            ),
            Choice(
                "Nothing: the partition keeps every record, so the source reads it from the start.",
                False,
                "The restored counters already counted the records before the checkpoint; read "
                "from the start of the log, those records would be counted twice.",
            ),
            Choice(
                "The records in flight on its output channels: with them no offset is needed.",
                False,
                "Those records are what had already left the source; they do not tell it which "
                "record of the partition to read next.",
            ),
        ),
        hint='See "Read positions, not high-water marks" and its table for `c2`.',
        misconception="a source records the partition's high-water mark",
    ),
    Question(
        "08.3",
        "An at-least-once run of the lesson's word count is crashed, restored from `c1` and run "
        "to the end. How does its output compare with the same run's without a crash?",
        (
            Choice(
                "Some records are missing: at-least-once gives records up to avoid aligning.",
                False,
                "The sources read again from their recorded positions, so nothing after them is "
                "skipped; in 45 crashes the lesson found no record missing.",
            ),
            Choice(
                "It is the same: the restore puts the job back exactly as it was at `c1`.",
                False,
                "Under at-least-once `c1` is an inconsistent cut: a record that crossed one of "
                "its barriers is in its recorded state and is processed again.",
            ),
            Choice(
                "Both: records that crossed a barrier come twice, and others go missing.",
                False,
                "Across the lesson's 45 crashes under at-least-once, every output differed from "
                "the failure-free one by extra deliveries only: no record was ever missing.",
            ),
            Choice(
                "Records that crossed a barrier of `c1` reach the sink twice; none is lost.",
                True,
                "Right: a record that crossed a barrier is in `c1`'s state and is read again "
                'after the restore; nothing is lost. That is "at least once".',
            ),
        ),
        hint="Compare the records that crossed a barrier of `c1` with those the restored run "
        "delivered twice.",
        misconception="at-least-once means some records are lost",
    ),
    Question(
        "self.08",
        "A job's checkpoints each need more than 20 steps to complete, its time-to-live is 20 "
        "steps, and it crashes at step 150. From where does the restore start it again?",
        (
            Choice(
                "From the last checkpoint triggered, which is at most one interval old.",
                False,
                "A checkpoint that was only triggered holds no complete state; a restore needs "
                "one that every operator finished, and here none could finish in time.",
            ),
            Choice(
                "From the start of the job: every checkpoint fails before it can complete.",
                True,
                "Right: a checkpoint that needs longer than its time-to-live is FAILED every "
                "time, so none is ever COMPLETED and the restore starts from the beginning.",
            ),
            Choice(
                "From about step 130: the time-to-live keeps a checkpoint at most 20 steps old.",
                False,
                "A time-to-live bounds how long a checkpoint may take, not how old the last "
                "completed one is; a checkpoint that cannot finish in 20 steps never completes.",
            ),
            Choice(
                "From the FAILED checkpoint with the most parts done, to lose the least work.",
                False,
                "A FAILED checkpoint's partial state is discarded when it fails: nothing of it "
                "is left to restore.",
            ),
        ),
        hint='Look at the same job run with different time-to-live values in "The registry".',
        misconception="a shorter time-to-live only makes recovery safer",
        lesson="08",
    ),
    # ------------------------------------------------------------------ lesson 09
    Question(
        "09.1",
        "In the lesson's sweep the marker (or barrier) delay grows from 1 to 16 ticks. Whose "
        "recorded in-flight bytes grow with it?",
        (
            Choice(
                "All four variants alike: every channel is recorded as long as its marker takes.",
                False,
                "A barrier variant records only what its own rule says, and a slower barrier "
                "does not change which records that is: look at the barrier variants' lines.",
            ),
            Choice(
                "Chandy–Lamport's only, roughly in a straight line with the delay.",
                True,
                "Right: the initiator's inputs are recorded until the markers come back, so "
                "each tick of delay adds rate × message size; the barrier variants' bytes do "
                "not grow.",
            ),
            Choice(
                "The unaligned checkpoints' most: they store what their slow barriers overtake.",
                False,
                "Unaligned barriers store the records they overtake on their outputs, and that "
                "does not depend on how long the barriers take: the same bytes at every delay.",
            ),
            Choice(
                "None: a slow marker delays the snapshot but does not change what it records.",
                False,
                "A channel that is recorded until its marker arrives holds whatever arrives "
                "meanwhile: a later marker leaves it open for longer.",
            ),
        ),
        hint="Read the mean recorded bytes per marker delay in section 1, one line per variant.",
        misconception="every variant records more in flight when the marker is slow",
    ),
    Question(
        "09.2",
        "In the reordering grid, message delays spread over 1..16 ticks while every marker "
        "takes 1 tick. How often is Chandy–Lamport inconsistent on FIFO channels?",
        (
            Choice(
                "Never: on a FIFO channel no message and no marker overtake each other.",
                True,
                "Right: FIFO keeps every message on its side of the marker, whatever the "
                "spread; the broken snapshots of this grid were all on non-FIFO channels.",
            ),
            Choice(
                "Nearly always, as on non-FIFO channels: a wide spread breaks any snapshot.",
                False,
                "Nearly all broke at a spread of 16 on the non-FIFO channels; a spread does "
                "harm only where a message may overtake a marker or be overtaken by one.",
            ),
            Choice(
                "About half the time: long delays make some messages miss the recording.",
                False,
                "A message is missed only when the marker overtakes it; ask whether a long "
                "delay lets anything overtake anything on the channels of this question.",
            ),
            Choice(
                "Only when the marker is slower than the messages sent before it.",
                False,
                "A marker that is slower than the messages ahead of it still arrives behind "
                "them on its channel: its delay costs memory, not the cut.",
            ),
        ),
        hint='Compare the FIFO and non-FIFO rows of the table in "What the grid shows".',
        misconception="reordering delays break Chandy–Lamport even on FIFO channels",
    ),
    Question(
        "09.3",
        "A team's clocks drift far less than the sweep's 0.1, so every process will record "
        "when its own clock reads 12:00. What decides whether such a snapshot is consistent?",
        (
            Choice(
                "The drift alone: at 0.02 or less the sweep found every clock snapshot consistent.",
                False,
                "The sweep's messages take at least a tick; real messages travel much faster, "
                "so a drift that was harmless in the sweep can break a real snapshot.",
            ),
            Choice(
                "Whether channels are FIFO: a message sent after 12:00 stays behind the others.",
                False,
                "A clock snapshot sends no marker for FIFO to keep in order: a message sent "
                "after its sender's 12:00 can still reach a receiver whose clock is behind.",
            ),
            Choice(
                "How large the clock error is compared with how long a message takes.",
                True,
                "Right: it breaks when the clocks disagree by more than a message takes to "
                "travel: a message sent after its sender recorded can then arrive before its "
                "receiver records.",
            ),
            Choice(
                "Nothing more: it is consistent if the clocks were synchronised at the start.",
                False,
                "Clocks synchronised at the start drift apart afterwards; at a drift of 0.1 the "
                "sweep found 78% of clock snapshots inconsistent.",
            ),
        ),
        hint="Read the paragraph after the drift figure in section 2, and recall lesson 01's "
        '"everyone record at 12:00".',
        misconception="small clock drift makes a clock-based snapshot safe",
    ),
    Question(
        "self.09",
        "Lesson 09's model, on a complete graph of 10 processes instead of 5, each still "
        "sending 2 messages of 200 B per tick: how many bytes does one more tick of marker "
        "delay add?",
        (
            Choice(
                "About 3,600 B: the initiator's 9 inputs, 2 messages each per tick, 200 B each.",
                False,
                "`rate` is messages per process per tick, spread over its 9 output channels: "
                "each of the initiator's inputs carries 2/9 of a message per tick, not 2.",
            ),
            Choice(
                "About 800 B: twice as many processes send twice as many messages.",
                False,
                "The extra bytes come only from the initiator's inputs, and together they carry "
                "what the others send it: 9 senders × 2/9 of a message, 2 messages per tick.",
            ),
            Choice(
                "About 36,000 B: each of the 90 channels is recorded one tick longer.",
                False,
                "Only the initiator's inputs are recorded for the whole delay; every other "
                "channel holds what was in transit when both its ends recorded.",
            ),
            Choice(
                "About 400 B, as with 5: rate × message size, for any number of processes.",
                True,
                "Right: the initiator's n − 1 inputs carry rate / (n − 1) messages per tick "
                "each, so one more tick adds rate × 200 B = 400 B for any n.",
            ),
        ),
        hint='Work through "The model": which channels are recorded for the whole delay, and '
        "what do they carry?",
        misconception="every recorded channel grows with the marker delay",
        lesson="09",
    ),
    # ------------------------------------------------------------------ lesson 10
    Question(
        "10.1",
        "The lab's `P3` is killed with SIGKILL while a snapshot is in progress. What does the "
        "controller do with that snapshot?",
        (
            Choice(
                "It fails it as soon as `P3` leaves or rejoins, and has the others clean up.",
                True,
                "Right: without `P3`'s heartbeats the membership changes and the snapshot can "
                "never complete, so it fails at once; a cleanup then frees the others' buffers.",
            ),
            Choice(
                "It waits for the snapshot's 20 s time-to-live to run out, then marks it FAILED.",
                False,
                "The controller does not wait for the time-to-live of a snapshot that can never "
                "complete: `P3`'s heartbeats tell it of the crash within about 2 s.",
            ),
            Choice(
                "It completes it from the parts of the three nodes still up, leaving `P3` out.",
                False,
                "A snapshot is COMPLETED only when every node's part is in, and `P3`'s part will "
                "never come: the markers to and from the old `P3` are gone.",
            ),
            Choice(
                "It keeps it open until the restarted `P3` sends its part, then completes it.",
                False,
                "A restarted `P3` is a new process holding nothing: whatever the old one had "
                "recorded for the snapshot died with it.",
            ),
        ),
        hint='Read "A crash in the middle of a snapshot": what does the reason for the '
        "failure name?",
        misconception="a snapshot waits for its time-to-live, or completes without the lost node",
    ),
    Question(
        "10.2",
        "Since the last snapshot a node's transfers changed 5% of its 400 accounts. Why can "
        "its incremental checkpoint still write much more than 5% of a full one?",
        (
            Choice(
                "An incremental checkpoint rewrites every chunk of its base, only in "
                "compressed form.",
                False,
                "An incremental checkpoint writes only the chunks whose bytes differ from the "
                "base's, and refers to the others wherever an earlier checkpoint wrote them.",
            ),
            Choice(
                "It copies the chunks of every earlier incremental, so each one grows.",
                False,
                "An incremental refers to earlier chunks where they were written; it does not "
                "copy them, so a chain of incrementals does not grow this way.",
            ),
            Choice(
                "A changed account rewrites its whole chunk, and each part lists all its chunks.",
                True,
                "Right: with 2 accounts to a chunk one change writes its neighbour too, and the "
                "listing of every chunk, changed or not, is a floor under what can be saved.",
            ),
            Choice(
                "It writes each changed account twice: once as state, once as channel state.",
                False,
                "Channel state is the transfers recorded in transit, not accounts; each account "
                "is written once, in the chunk that holds it.",
            ),
        ),
        hint='See "Incremental checkpoints": what two things does "up to 90%" leave out?',
        misconception="an incremental checkpoint writes only the changed accounts",
    ),
    Question(
        "10.3",
        'Nodes that upload their parts at the same moment get "503 Slow Down" from a store '
        "that limits writes per key prefix. What do jittered uploads change?",
        (
            Choice(
                "They raise the store's limit: writes spread over time count against a higher "
                "rate.",
                False,
                "The limit is the store's, per key prefix, and waiting does not change it; "
                "spreading the keys over several prefixes is what brings more rate.",
            ),
            Choice(
                "Nothing useful: the SDKs' retries already keep every snapshot from failing.",
                False,
                "Retries are limited: in the lab a write refused five times fails its part, and "
                "with it the snapshot.",
            ),
            Choice(
                "They make every snapshot faster, since no write ever has to be tried again.",
                False,
                "The random wait is paid on every snapshot: on the lab's small cluster the "
                "snapshots with jitter took longer, and a few writes may still be refused.",
            ),
            Choice(
                "They spread writes over time: fewer are refused, but each snapshot pays the wait.",
                True,
                "Right: each node waits a random 0 to 500 ms before it uploads, so fewer writes "
                "meet the limit at once; the wait is paid on every snapshot, the retries only "
                "when the store pushes back.",
            ),
        ),
        hint='Read the paragraphs after the table in "A store that says Slow Down".',
        misconception="jitter raises the store's rate limit, or costs nothing",
    ),
    Question(
        "self.10",
        "During a snapshot of the lab, node `P2` stalls for 3 s in a garbage-collection pause "
        "and then goes on; the heartbeat timeout is 2 s. What happens to the snapshot?",
        (
            Choice(
                "The controller sees that `P2` is only slow, waits, and the snapshot completes.",
                False,
                "The controller knows only heartbeats, and a stalled node sends none: it cannot "
                "tell a slow node from a dead one.",
            ),
            Choice(
                "`P2` is declared gone and the snapshot fails, although nothing crashed.",
                True,
                "Right: 2 s without a heartbeat make `P2` leave, and a membership change fails "
                "every snapshot in progress; when its heartbeats resume, `P2` joins again.",
            ),
            Choice(
                "The snapshot completes without `P2`'s part, since `P2` is declared gone.",
                False,
                "A snapshot is COMPLETED only once every node's part is in; the controller never "
                "completes one with a node's part missing.",
            ),
            Choice(
                "Nothing happens to it: only a crash fails a snapshot, and `P2` did not crash.",
                False,
                "The controller does not know why the heartbeats stopped: 3 s of silence is a "
                "membership change, whatever its cause.",
            ),
        ),
        hint='Read "Membership: what the controller knows": what does 2 s of silence look '
        "like to the controller?",
        misconception="a failure detector can tell a slow node from a dead one",
        lesson="10",
    ),
    # ------------------------------------------------------------------ lesson 11
    Question(
        "11.1",
        "Each process of a run saves checkpoints on its own, with no coordination. After a "
        "crash, how far back can the rollback to the recovery line go?",
        (
            Choice(
                "To each process's latest checkpoint: that is what checkpoints are saved for.",
                False,
                "A latest checkpoint that holds the receipt of an orphan cannot be restarted "
                "from; in the lesson's domino run every rollback exposed another orphan.",
            ),
            Choice(
                "Only the crashed process rolls back; the others keep their latest checkpoints.",
                False,
                "When a process rolls back past a send, the receiver's checkpoint holds an "
                "orphan and must roll back too: rollbacks spread from process to process.",
            ),
            Choice(
                "At most one checkpoint per process, since each rollback removes one orphan.",
                False,
                "A rollback can make a new orphan, so one process may roll back more than once: "
                "in the domino run `P2` went from 3 to 1 and later to 0.",
            ),
            Choice(
                "Back to every process's start, although every process saved checkpoints.",
                True,
                "Right: each rollback can undo a send and make a new orphan, and in the domino "
                "run the rollbacks propagate until all three processes are back at their start.",
            ),
        ),
        hint='Follow the rollbacks one at a time in "The domino effect".',
        misconception="uncoordinated checkpoints always give a recent recovery line",
    ),
    Question(
        "11.2",
        "A cut made of checkpoints, one per process, is a candidate restart point. Which "
        "message stops the processes from restarting from it?",
        (
            Choice(
                "One received inside the cut but sent outside it.",
                True,
                "Right: an orphan. After the restart its receiver would remember a message that "
                "its sender has not sent, and may never send again in that form.",
            ),
            Choice(
                "One sent inside the cut but received outside it.",
                False,
                "That message is in transit across the cut, like a snapshot's channel state: "
                "harmless if it is delivered again after the restart.",
            ),
            Choice(
                "Any message that crosses the cut, in either direction.",
                False,
                "A message sent inside the cut and received outside it is only in transit; "
                "delivered again, it does no harm, so crossing alone breaks nothing.",
            ),
            Choice(
                "Any message still in transit at the crash.",
                False,
                "A message in transit at the crash was received by no checkpoint, so no "
                "restarted process remembers it; the crash's moment does not decide this.",
            ),
        ),
        hint='Read "Checkpoints and orphans": which way of crossing the cut is harmless?',
        misconception="any message crossing the cut makes it unusable",
    ),
    Question(
        "11.3",
        "A job takes coordinated checkpoints; its sink sends records to an outside world that "
        "cannot take them back. By the rule of output commit, when may a record go out?",
        (
            Choice(
                "At once: after a restore the job's state is exactly once, so its output is too.",
                False,
                "A restore rolls back the job's state, not what the outside world has seen: in "
                "lessons 08 and 11 a plain sink wrote `S2#8` and `S2#9` twice.",
            ),
            Choice(
                "As soon as the sink has recorded its own state for the next checkpoint.",
                False,
                "The checkpoint can still fail after the sink recorded (a crash, a time-to-live), "
                "and a restore would then go back to an earlier one, undoing that state.",
            ),
            Choice(
                "Once the next checkpoint has completed, so no recovery can undo its state.",
                True,
                "Right: output commit. What leaves cannot be rolled back, so it waits for a "
                "checkpoint that no restore will go behind; a transactional sink does this.",
            ),
            Choice(
                "Only when the whole job has ended, since any later crash could undo it.",
                False,
                "A restore never goes back before the last COMPLETED checkpoint, so waiting for "
                "the end of the job holds output back far longer than safety needs.",
            ),
        ),
        hint='Read "Output commit" and the table of the three sinks.',
        misconception="exactly-once state means exactly-once output",
    ),
    Question(
        "self.11",
        "`P1` sends m to `P2`, which then sends n to `P3`; `P1` saved no checkpoint, `P2` one "
        "after receiving m, `P3` one after receiving n. Where is the recovery line?",
        (
            Choice(
                "`P1` at its start, `P2` and `P3` at their checkpoints: each has its latest.",
                False,
                "`P2`'s checkpoint holds the receipt of m, which `P1`'s start has not sent: m is "
                "an orphan, so that cut is no place to restart from.",
            ),
            Choice(
                "All three at their start: undoing the receipt of m makes n an orphan too.",
                True,
                "Right: m is an orphan, so `P2` rolls back to its start; that undoes the send of "
                "n, which `P3`'s checkpoint received, so `P3` rolls back as well.",
            ),
            Choice(
                "`P2` at its start, `P3` at its checkpoint: only `P2` held an orphan.",
                False,
                "Rolling `P2` back undoes its send of n, which `P3`'s checkpoint still holds as "
                "received: n becomes an orphan in turn.",
            ),
            Choice(
                "`P1` just after sending m, `P2` and `P3` at their checkpoints.",
                False,
                "`P1` saved no checkpoint after sending m, so it can restart only from its "
                "start: a restart point is made of checkpoints.",
            ),
        ),
        hint='Undo one orphan at a time, as in "Rollback propagation", and look again after '
        "each rollback.",
        misconception="a rollback stops at the process that received the orphan",
        lesson="11",
    ),
    # ---------------------------------------------------------- across the course
    Question(
        "self.x1",
        "A crashed system is restored from its last Chandy–Lamport snapshot. Must the state "
        "it restarts from be one the system actually passed through?",
        (
            Choice(
                "Yes: a snapshot records the global state at the moment the initiator starts it.",
                False,
                "Processes record at different moments, as their markers reach them; in lesson "
                "02's run `02-never-occurred` the recorded state occurred at no moment at all.",
            ),
            Choice(
                "Yes: restarting from a state that never occurred would make the run incorrect.",
                False,
                "A state the run could have passed through is as good a place to go on from: what "
                "follows from it is one of the system's possible runs.",
            ),
            Choice(
                "No: it may never have occurred, but lies on a run the system could have made.",
                True,
                "Right: the recorded state is reachable from the start and leads to the end "
                "(Dijkstra's swaps, lesson 04), so a restart from it goes on as a possible run.",
            ),
            Choice(
                "No, so restores should use stop-the-world snapshots, whose state did occur.",
                False,
                "Lesson 08 restores Chandy–Lamport checkpoints after 45 crashes and gets the "
                "failure-free output every time: stopping the world is not needed for that.",
            ),
        ),
        hint="Recall lesson 02's state that never occurred and lesson 04's SSS between S0 and S1.",
        misconception="the snapshot is a state the system was in",
        lesson="02",
    ),
    Question(
        "self.x2",
        "A restart from a recovery line finds message `m` sent inside the cut and received "
        "outside it. What must the restart do about `m`, which a snapshot would have recorded?",
        (
            Choice(
                "Nothing: `m` was sent inside the cut, so the restarted sender sends it again.",
                False,
                "The sender restarts from a state in which `m` is already sent: it will not "
                "send `m` again of its own accord.",
            ),
            Choice(
                "Roll the sender back to before the send, so that `m` never happened.",
                False,
                "A message received outside the cut orphans no one: rolling its sender back "
                "throws work away, and the recovery line is the latest consistent cut.",
            ),
            Choice(
                "Get `m` delivered again: it was in transit across the cut, like a channel state.",
                True,
                "Right: `m` crosses the cut the harmless way only if it is delivered again. A "
                "snapshot keeps it in its channel state; after checkpoints alone a log "
                "(message logging) or the sender must supply it.",
            ),
            Choice(
                "Roll the receiver back as well, since `m` crosses the cut.",
                False,
                "The receiver's part of the cut does not hold the receipt of `m`: there is "
                "nothing there to undo.",
            ),
        ),
        hint="Lesson 11: which messages across a cut of checkpoints are harmless, and on what "
        "condition (lesson 02: what a channel state holds)?",
        misconception="a message crossing a recovery line needs no care",
        lesson="11",
    ),
)
