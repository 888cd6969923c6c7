"""Concept checks of lessons 05b_to_07b: see :mod:`.model`."""

from __future__ import annotations

from .model import Choice, Question

QUESTIONS: tuple[Question, ...] = (
    # ------------------------------------------------------------ 05b without FIFO
    Question(
        "05b.1",
        "A snapshot service sends its data over TCP, but each marker as a `SendMarker` call "
        "of its own, on another connection. Why can its snapshots be wrong?",
        (
            Choice(
                "TCP may deliver the data messages of one connection out of their sending order.",
                False,
                "TCP delivers what is sent on one connection in order, so the data's own stream "
                "is FIFO. The trouble lies in what travels off that stream.",
            ),
            Choice(
                "gRPC reorders the messages within a single call, so the data arrives out of "
                "order.",
                False,
                "gRPC keeps the order of the messages within one call, streaming calls "
                "included. Reordering between two processes comes from separate calls, "
                "connections and retries.",
            ),
            Choice(
                "Nothing orders a SendMarker call with the data, so each can overtake the other.",
                True,
                "Right: FIFO protects the marker only on the data's own ordered stream. Out of "
                "band, data sent after a late marker overtakes it, and the receiver counts that "
                "money twice.",
            ),
            Choice(
                "It cannot: the data runs over TCP, so every channel is FIFO and the marker is "
                "safe.",
                False,
                "A channel, in the algorithm's sense, is one ordered stream with the markers in "
                "it. Here the markers travel on a stream of their own, so the data's order says "
                "nothing about them.",
            ),
        ),
        hint="Reread 'Where real channels reorder': on which stream does the marker travel, "
        "and what orders it with the data?",
        misconception="a FIFO transport for the data protects the marker wherever it travels",
    ),
    Question(
        "05b.2",
        "Under Lai–Yang, `P2` has not recorded yet when a message from `P1` arrives marked red: "
        "`P1` sent it after recording. What does `P2` do?",
        (
            Choice(
                "It records its state first and then accepts it, so the accepting action is red.",
                True,
                "Right: no red message is ever accepted in a white action, Dijkstra's 'magic' "
                "done without FIFO. In non-fifo-breaks P2 records 0 tokens before it accepts "
                "late.",
            ),
            Choice(
                "It accepts the message and records it as part of the state of channel P1->P2.",
                False,
                "A red message is never recorded in a channel's state: P1's recorded state "
                "still counts what it carries, so recording it would count it twice.",
            ),
            Choice(
                "It holds the message back, unaccepted, until the marker from P1 has arrived.",
                False,
                "Lai–Yang holds nothing back: the colour bit tells P2 at once what it needs. "
                "Holding messages back until their turn is the other way out, restoring FIFO "
                "with sequence numbers.",
            ),
            Choice(
                "It accepts the message at once, then records its own state when the next marker "
                "comes.",
                False,
                "Then P2's recorded state counts what the red message carries, and so does "
                "P1's: a red message accepted in a white action, lesson 05a's first failure.",
            ),
        ),
        hint="See 'What a fix must add': what does the colour bit let a white process do "
        "before it accepts a message?",
        misconception="an early red message must be held back or recorded in transit",
    ),
    Question(
        "05b.3",
        "In the counting version of the fix, every marker carries a number. What does that "
        "number tell the marker's receiver?",
        (
            Choice(
                "The snapshot's own number, so that the markers of an older snapshot are ignored.",
                False,
                "Snapshots are told apart by their ids, not by this number. The number is about "
                "the messages on the marker's own channel.",
            ),
            Choice(
                "Each message's position, so that the receiver can put them back in FIFO order.",
                False,
                "That is the third way out, sequence numbers on every message. The marker's "
                "number reorders nothing: messages are accepted as they arrive.",
            ),
            Choice(
                "How many red messages its sender will send on that channel before the snapshot "
                "ends.",
                False,
                "A sender cannot know how many messages it will send after recording, and red "
                "messages never go into a channel's state, so counting them would not help.",
            ),
            Choice(
                "How many white messages the sender put on that channel: when to stop recording.",
                True,
                "Right: the receiver records until it has seen the marker and that many white "
                "messages. In 05-marker-overtakes-message the marker said one, so early went "
                "into the state of P1->P2.",
            ),
        ),
        hint="See 'What a fix must add': besides a message's colour, what can the receiver "
        "no longer tell from where the marker falls?",
        misconception="the marker's count is a sequence number that restores FIFO",
    ),
    Question(
        "self.05b",
        "Under Lai–Yang, `P1` sends `x` and `y` to `P2`, then records; its marker says 2. `P2` "
        "records on the marker, then `y` arrives. When does `P2` stop recording `P1->P2`?",
        (
            Choice(
                "At once: the marker has arrived on P1->P2, and a marker always closes its "
                "channel.",
                False,
                "On a channel that reorders, the marker no longer marks the end of the white "
                "messages: x is still on its way, and closing now would miss it, as in lesson "
                "05a.",
            ),
            Choice(
                "When x has arrived too: the marker counted two white messages, only y is in.",
                True,
                "Right: P2 keeps recording until it has the marker and both white messages. "
                "The state of P1->P2 is y and x, and the snapshot counts every token.",
            ),
            Choice(
                "As soon as y has arrived: one white message after the marker closes the channel.",
                False,
                "The number counts every white message P1 put on the channel, two here, in "
                "whatever order they arrive. After y, x is still on its way.",
            ),
            Choice(
                "When a red message from P1 arrives, which shows that the white ones are all in.",
                False,
                "On a channel that reorders, a red message may overtake white ones still on "
                "their way, so it shows nothing about them. And P1 may never send again.",
            ),
        ),
        hint="What does the number in P1's marker count, and which of those messages has P2 "
        "seen so far?",
        misconception="without FIFO the marker still ends a channel's recording",
        lesson="05b",
    ),
    # ------------------------------------------------------- 06a stable predicates
    Question(
        "06a.1",
        "A complete snapshot reports that the computation has terminated. What can its "
        "initiator conclude?",
        (
            Choice(
                "It had already terminated at the moment the snapshot began, in the state S0.",
                False,
                "Not necessarily: in the lesson's run s2 began while P3's reply was still on its "
                "way and P1 and P2 were waiting, and it still reports termination.",
            ),
            Choice(
                "It has terminated by the time the snapshot ended, and it stays terminated.",
                True,
                "Right: S1, the state when the snapshot ended, is reachable from SSS, and "
                "termination is stable, so it holds at S1 and in every state after it.",
            ),
            Choice(
                "Nothing certain: the recorded state may never have existed at any instant.",
                False,
                "That SSS may never have existed does not matter: it is reachable from S0, and "
                "S1 is reachable from it. For a stable predicate that is enough.",
            ),
            Choice(
                "It terminated at some instant during the snapshot and may have resumed since.",
                False,
                "Termination is stable: a passive process acts only when a message arrives, and "
                "none will. Once it holds, no later state can undo it.",
            ),
        ),
        hint="See the chain S0 → SSS → S1 in 'Why a snapshot can decide one': which of these "
        "states does a yes speak for?",
        misconception="a recorded state that never existed proves nothing",
    ),
    Question(
        "06a.2",
        "A termination check on a complete snapshot says **not terminated**. What does that "
        "answer establish?",
        (
            Choice(
                "It is still running now: a snapshot shows the system's current state.",
                False,
                "A snapshot describes SSS, which lies between the start and the end of the "
                "snapshot, not the present. Termination may set in while the parts travel to "
                "the initiator.",
            ),
            Choice(
                "It will never terminate: termination is stable, so the answer cannot change.",
                False,
                "Stability rules out a yes followed by a no, not a no followed by a yes: the "
                "computation may terminate at any time, and a later snapshot then says so.",
            ),
            Choice(
                "It had not terminated when the snapshot ended, but it may have since.",
                False,
                "A no says less than that: termination may already hold by the end of the "
                "snapshot. The lesson's sweep found such late answers of 'not yet'.",
            ),
            Choice(
                "Only that it had not terminated when the snapshot began; it may have since.",
                True,
                "Right: a stable predicate that held at S0 holds in SSS, so a no rules out S0 "
                "only. Termination may have set in during the snapshot: ask again later.",
            ),
        ),
        hint="Read the three points under the chain S0 → SSS → S1: which state does a no "
        "speak for?",
        misconception="a snapshot shows the current state",
    ),
    Question(
        "06a.3",
        "In the lesson's five-token run, the recorded process states of snapshot `s1` hold only "
        "1 token. What should the initiator conclude?",
        (
            Choice(
                "Nothing is lost: the recorded channel states hold the other 4 tokens.",
                True,
                "Right: only one token was in a process when it recorded; four were on their way, "
                "and the conservation check counts 1 plus 4 in transit, 5 as at the start.",
            ),
            Choice(
                "Four tokens have been lost, and loss is stable, so they are lost for good.",
                False,
                "That is the false alarm of adding up the process states only. This application "
                "never loses a token; half of the snapshot was thrown away.",
            ),
            Choice(
                "The snapshot is inconsistent: a consistent one finds every token in a process.",
                False,
                "A consistent cut may have messages in transit, and s1 is consistent: Dijkstra's "
                "reordering of the run passes through it. Tokens on their way are not lost.",
            ),
            Choice(
                "The snapshot was taken too early; the initiator must wait for a quieter moment.",
                False,
                "No quiet moment is needed: the algorithm runs while messages move, and s1 is "
                "complete, every marker in.",
            ),
        ),
        hint="See 'Token conservation': which half of a snapshot does adding up the process "
        "states leave out?",
        misconception="channel states are optional: the process states say it all",
    ),
    Question(
        "self.06a",
        "A buggy bank application can lose money but never create it. A complete snapshot, "
        "channels included, counts 290 of the 300 units. What can be concluded?",
        (
            Choice(
                "Exactly 10 units are missing now, since a snapshot shows the current total.",
                False,
                "A snapshot speaks for SSS, not the present, and the total can only go down: in "
                "the lesson's buggy run s2 finds two tokens missing where s1 found one.",
            ),
            Choice(
                "Nothing yet: the recorded total may belong to a state that never existed.",
                False,
                "SSS may never have existed, but S1, the state when the snapshot ended, is "
                "reachable from it, and a stable predicate that holds in SSS holds at S1.",
            ),
            Choice(
                "Money has been lost, and by now at least 10 units are missing for good.",
                True,
                "Right: 'money has been lost' is stable when the total can only go down. It "
                "holds in SSS, so at S1 and ever after, with at least those 10 units missing.",
            ),
            Choice(
                "The 10 units are in transit, and the next snapshot will find them.",
                False,
                "This snapshot recorded the channels too, so money in transit is in its count "
                "already. Nothing missing from it is on its way.",
            ),
        ),
        hint="Once money is lost in this application, can it come back? Think of the chain "
        "S0 → SSS → S1.",
        misconception="a snapshot gives the current value of what it measures",
        lesson="06a",
    ),
    # ------------------------------------------------------ 06b lattice of cuts
    Question(
        "06b.1",
        "In the small run, the snapshot recorded cut `1 1 1`: every token in transit, a state "
        "the run never passed through. Is `1 1 1` a consistent cut?",
        (
            Choice(
                "No: in a consistent cut no message is in transit, and this one has three in "
                "transit.",
                False,
                "Messages sent and not yet received are allowed: they are the channel states. "
                "What a consistent cut rules out is a message received inside it and sent "
                "outside.",
            ),
            Choice(
                "No: the run never passed through it, so it is not one of the run's consistent "
                "cuts.",
                False,
                "The lattice holds every state the run could have passed through, not only those "
                "it did. Dijkstra's reordering of the run, white then red, passes through 1 1 1.",
            ),
            Choice(
                "Yes, but only because the markers paused the processes in it for an instant.",
                False,
                "Markers pause nothing, and the run was never in 1 1 1. Whether a cut is "
                "consistent depends on the events it holds, not on what the run did.",
            ),
            Choice(
                "Yes: every receive in it has its send in it, and unreceived messages are allowed.",
                True,
                "Right: 1 1 1 is a node of the lattice, between S0 and S1, though the run's own "
                "order goes around it. The three tokens are in recorded channel states.",
            ),
        ),
        hint="Recall the definition in 'Every consistent cut: the lattice': what must a cut "
        "contain for every receive in it?",
        misconception="a consistent cut is one where no messages are in flight",
    ),
    Question(
        "06b.2",
        "A snapshot's recorded state satisfies φ, a predicate that is **not** stable. What does "
        "that prove about the run?",
        (
            Choice(
                "That φ holds now, when the initiator has collected all the parts of the snapshot.",
                False,
                "That works for stable predicates only. In the small run 'no process holds a "
                "token' holds in SSS but no longer at S1, when the snapshot ended.",
            ),
            Choice(
                "That φ held at some instant of the run itself, though nobody can tell when.",
                False,
                "The run may never have passed through SSS: in the small run 'no process holds "
                "a token' holds only at 1 1 1, which the run's own order goes around.",
            ),
            Choice(
                "Possibly φ: some order of the run's events passes through a state where φ holds.",
                True,
                "Right: SSS is a consistent cut, so some path through the lattice passes it. "
                "Definitely φ needs every path to meet such a cut, which needs the whole lattice.",
            ),
            Choice(
                "Definitely φ: every order of the run's events passes through a state where φ "
                "holds.",
                False,
                "One cut says nothing of the other paths: in the small run 'no process holds a "
                "token' holds in SSS, yet the run's own order avoids every cut where it holds.",
            ),
        ),
        hint="See 'Possibly and definitely': what does one consistent cut where φ holds say "
        "about the paths through the lattice?",
        misconception="a predicate seen in a snapshot held in the run, or holds now",
    ),
    Question(
        "06b.3",
        "Why do **possibly** and **definitely** always agree for a stable predicate?",
        (
            Choice(
                "Once it holds at a cut it holds at every cut above, and every path reaches the "
                "top.",
                True,
                "Right: if it holds anywhere it holds at the top, which every path from the "
                "bottom reaches, so possibly gives definitely; definitely gives possibly anyway.",
            ),
            Choice(
                "A stable predicate holds at every cut of the lattice, or at none of them.",
                False,
                "A stable predicate can start false and become true: termination is false while "
                "processes are busy. Stability says only that it never turns false again.",
            ),
            Choice(
                "The run passes through every consistent cut, so a single cut where it holds is "
                "enough.",
                False,
                "A run takes one path through the lattice and goes around most cuts: the small "
                "run never passed through 1 1 1, the cut its snapshot recorded.",
            ),
            Choice(
                "A snapshot of a stable predicate records the true state, not just a possible one.",
                False,
                "A snapshot records SSS, which may never have existed, whatever is asked of it "
                "afterwards. The agreement is a property of the lattice, not of the snapshot.",
            ),
        ),
        hint="See the paragraph after the possibly and definitely results: once a stable "
        "predicate holds at a cut, where else does it hold?",
        misconception="a stable predicate holds at every cut or at none",
    ),
    Question(
        "self.06b",
        "`P1` sends `a` to `P2` while `P2` sends `b` to `P1`; each sends before it receives. Is "
        "'both messages in transit at once' possible only, or definite?",
        (
            Choice(
                "Possible only: if a is received before b is sent, the two are never in transit "
                "together.",
                False,
                "P2 sends b before it receives anything, so a cannot be received before b is "
                "sent. Check each process's own order of events.",
            ),
            Choice(
                "Definite: just before the first receive, both messages are sent and neither is "
                "received.",
                True,
                "Right: each receive needs the other process's send first, so whichever receive "
                "comes first, both messages are in transit just before it, in every order.",
            ),
            Choice(
                "Possible only: it depends on the message delays, which no process can see.",
                False,
                "Delays choose which path the run takes through the lattice. The question is "
                "whether any path at all avoids that state: look at each process's order of "
                "events.",
            ),
            Choice(
                "Never: no consistent cut can hold two messages in transit in opposite directions.",
                False,
                "A consistent cut may hold any number of messages in transit, in any direction; "
                "it rules out only a receive whose send lies outside it.",
            ),
        ),
        hint="Think of the first receive of the run, whichever it is: what must already have "
        "happened at both processes?",
        misconception="crossing messages are in transit together only under some timings",
        lesson="06b",
    ),
    # ------------------------------------------------------ 07a barrier snapshots
    Question(
        "07a.1",
        "Under Chandy–Lamport, `C1` has recorded its counts on the marker from `S1`. What does "
        "it do with records that arrive on `S2->C1` before that channel's marker?",
        (
            Choice(
                "It reads them as usual and keeps a copy of each, as the recorded state of S2->C1.",
                True,
                "Right: recording an input does not stop it. In the lesson's run S2#3 arrives "
                "between C1's recording and S2's marker and becomes the recorded state of S2->C1.",
            ),
            Choice(
                "None arrive: on its first marker C1 freezes its other inputs until their markers.",
                False,
                "Neither of Chandy and Lamport's rules freezes anything: the receiver only notes "
                "what arrives until the marker comes. The freezing is the system-design lesson's, "
                "not theirs.",
            ),
            Choice(
                "It leaves them unread on the channel, and the checkpoint stores what waits there.",
                False,
                "Chandy–Lamport never leaves an input unread: C1 goes on reading both inputs "
                "after it recorded. Only alignment stops reading an input.",
            ),
            Choice(
                "It drops them: they were sent before the marker, so they belong to no checkpoint.",
                False,
                "Records sent before the marker and read after the receiver recorded are in "
                "flight across the cut. Dropping them would lose them from the job and the "
                "checkpoint alike.",
            ),
        ),
        hint="Reread Chandy and Lamport's two rules in 'The marker algorithm on a job': does "
        "either of them stop an input?",
        misconception="markers freeze the inputs",
    ),
    Question(
        "07a.2",
        "Aligned checkpoints of the word count store no records in flight. What happens to the "
        "records `S1` sends on `S1->C1` while `C1` aligns?",
        (
            Choice(
                "C1 reads and counts them before it records, and a restore reads them again.",
                False,
                "That is what happens when alignment is skipped, under at-least-once. An aligned "
                "C1 does not read an input whose barrier has arrived.",
            ),
            Choice(
                "None are sent: alignment stops S1 until the barrier on S2->C1 has arrived.",
                False,
                "Alignment blocks C1's input, not S1: the source goes on reading and sending. "
                "Only a full channel, under backpressure, makes its writer wait.",
            ),
            Choice(
                "They wait in the blocked input until the barrier has arrived on S2->C1 too.",
                True,
                "Right: alignment removes the need to store records in flight, not to hold them. "
                "In the lesson's run S1#3 and S1#4 wait on S1->C1, blocked for 8 steps.",
            ),
            Choice(
                "They are stored with the checkpoint as the recorded state of S1->C1.",
                False,
                "They were sent after S1's barrier, so they belong after the cut, and no "
                "checkpoint stores them: the aligned checkpoint shows nothing in flight.",
            ),
        ),
        hint="See 'Aligned barriers': what does C1 do with S1->C1 once the barrier from S1 has "
        "come in?",
        misconception="alignment needs no buffering",
    ),
    Question(
        "07a.3",
        "Under at-least-once, `C1` reads `S1#3` after the barrier from `S1` and before "
        "recording its counts. What if the job is restored from that checkpoint?",
        (
            Choice(
                "S1#3 is lost: no recorded state of the checkpoint holds it, and no source "
                "rereads it.",
                False,
                "S1 recorded offset 3, the position of the next record it reads, so a restore "
                "makes it read S1#3 again. On this job no record is lost.",
            ),
            Choice(
                "S1#3 comes twice: C1's restored counts include it, and S1 reads it again.",
                True,
                "Right: a red message accepted in a white action makes the cut inconsistent. The "
                "record is in C1's state and replayed after it: a duplicate, after a restore "
                "only.",
            ),
            Choice(
                "Nothing goes wrong: the restore skips every record that crossed a barrier.",
                False,
                "A restore rewinds each source to its recorded offset and knows no list of "
                "crossings. Flink's documentation says such records occur as duplicates.",
            ),
            Choice(
                "The restore refuses the checkpoint, which is inconsistent, and uses an earlier "
                "one.",
                False,
                "A checkpoint is COMPLETED once every operator has finished its part; nothing "
                "checks its cut, so it is the one a restore uses.",
            ),
        ),
        hint="Which offset did S1 record, and which counts did C1 record? See 'At-least-once: "
        "alignment skipped'.",
        misconception="at-least-once means some records are lost",
    ),
    Question(
        "self.07a",
        "Operator `J` has two inputs; one, from `M`, closes a cycle through `J`. Under aligned "
        "barriers as in the ABS paper, what does a checkpoint store in flight?",
        (
            Choice(
                "Nothing: aligned checkpoints never store records in flight, on any job.",
                False,
                "That holds on a job without cycles. On a cycle an operator cannot wait for the "
                "barrier on its back edge, and what arrives there meanwhile must go somewhere.",
            ),
            Choice(
                "Nothing: J waits for the barrier on M->J just as it does on any of its other "
                "inputs.",
                False,
                "That barrier comes round only after J has sent its own, and J sends its own "
                "only once it has them all: taken literally, the handler deadlocks here.",
            ),
            Choice(
                "The records that wait on J's other input while that input is blocked.",
                False,
                "Records waiting on a blocked input are held, not stored: they were sent after "
                "that input's barrier, so they belong after the cut.",
            ),
            Choice(
                "The records arriving on M->J after J records, until its barrier comes round.",
                True,
                "Right: J does not wait on the back edge; it records when its other barriers are "
                "in and logs the back edge, as H logs S#4 on L->H in the lesson.",
            ),
        ),
        hint="See 'A job with a cycle': can J wait for the barrier on the channel that closes "
        "the cycle?",
        misconception="aligned checkpoints store no records in flight even on a cycle",
        lesson="07a",
    ),
    # --------------------------------------------------- 07b measuring trade-offs
    Question(
        "07b.1",
        "In the 100-node cluster, with every marker held up 2 s, which nodes record all 99 of "
        "their input channels, 1.98 GB?",
        (
            Choice(
                "Every node: each has 99 input channels, and it records each of them for the 2 s.",
                False,
                "Not every input is recorded for 2 s: the channel that brings a node its first "
                "marker is closed by that very marker, with nothing recorded on it.",
            ),
            Choice(
                "Only the initiator; each other node records 98, its first marker's channel empty.",
                True,
                "Right: the initiator records its state first and all 99 inputs until their "
                "markers; every other node records 98, 1.96 GB, in the worst case the text "
                "assumes.",
            ),
            Choice(
                "None of them: a node records only the one channel that its first marker came on.",
                False,
                "The channel of the first marker is the one a node records as empty. It records "
                "its other inputs, each until its own marker comes.",
            ),
            Choice(
                "Every node but the initiator, which records before any marker has arrived.",
                False,
                "Recording before any marker arrives does not spare the initiator: a process "
                "that has recorded records each input until that input's marker comes.",
            ),
        ),
        hint="See 'The sizing arithmetic, worked': which channel does a node record as empty, "
        "and which node gets no first marker?",
        misconception="every node records all its input channels",
    ),
    Question(
        "07b.2",
        "Every channel has room for one record (backpressure). What bounds what a "
        "Chandy–Lamport receiver records on one input before that input's marker?",
        (
            Choice(
                "The capacity: a channel with room for one record can never feed more than one "
                "record.",
                False,
                "A Chandy–Lamport receiver never blocks: it takes each record off the channel "
                "and keeps a copy, which makes room for the next. A channel of room one fed a "
                "recording of ten.",
            ),
            Choice(
                "Backpressure: the sender waits until the receiver has its marker on that channel.",
                False,
                "A writer waits only while its channel is full, and a receiver that keeps "
                "reading never leaves it full. Nothing makes the sender wait for the marker.",
            ),
            Choice(
                "At most one record, as the receiver stops reading that input until its marker.",
                False,
                "Stopping an input is alignment, whose blocked inputs the room does bound. A "
                "Chandy–Lamport receiver goes on reading every input after it recorded.",
            ),
            Choice(
                "Not the capacity: the recording grows with the sending rate times the marker's "
                "delay.",
                True,
                "Right: the receiver never blocks, so it records whatever arrives until the "
                "marker. The room bounds what blocked inputs hold under alignment, not this.",
            ),
        ),
        hint="See 'What backpressure bounds': does a Chandy–Lamport receiver ever stop reading "
        "an input it records?",
        misconception="backpressure bounds what every variant records",
    ),
    Question(
        "07b.3",
        "The trade-off table says Chandy–Lamport needs a fully connected FIFO graph. What do "
        "its snapshots actually need of the graph?",
        (
            Choice(
                "Every pair of processes joined both ways, as the table says, and FIFO channels.",
                False,
                "The word count has 6 of the 20 channels a complete graph of its 5 operators "
                "would have, and every one of its checkpoints completes.",
            ),
            Choice(
                "Nothing at all: it works on any directed graph, with cycles or without, FIFO or "
                "not.",
                False,
                "A process that no marker reaches never records: on P1 ⇄ P2 with P3 → P2, P3 "
                "never records and the snapshot never completes. And lesson 05a showed why FIFO "
                "matters.",
            ),
            Choice(
                "FIFO channels on which markers reach every process from the initiators.",
                True,
                "Right: FIFO, yes; fully connected, no. The word count has 6 of its 20 possible "
                "channels and its checkpoints complete; a process no marker reaches never "
                "records.",
            ),
            Choice(
                "A directed acyclic graph, so that no marker can come back to its sender.",
                False,
                "A marker coming back is harmless: a process records once and takes later "
                "markers as the end of a channel. Chandy–Lamport completes its checkpoints of "
                "the cyclic job.",
            ),
        ),
        hint="See the 'Topology' point under 'A trade-off table, tested': what happens to a "
        "process that no marker reaches?",
        misconception="Chandy–Lamport needs a fully connected graph",
    ),
    Question(
        "self.07b",
        "A job with a cycle is checkpointed in at-least-once mode, which logs no back edge. "
        "What can a crash and a restore do to its output?",
        (
            Choice(
                "Lose records: those on the loop are in no state, and the back edge was recorded "
                "empty.",
                True,
                "Right: at-least-once logs no back edge, so the records going round the loop "
                "when the checkpoint passed are lost: on the lesson's cyclic job, in 32 of 40 "
                "crashed runs.",
            ),
            Choice(
                "Duplicate records, but never lose one: that is just what at-least-once promises.",
                False,
                "On a cycle that promise fails: the lesson's cyclic job ends with its "
                "failure-free output in only 8 of 40 crashed runs, and it has no duplicates.",
            ),
            Choice(
                "Nothing: with one input apart from the back edge, no record crosses a barrier.",
                False,
                "A barrier-crossing record is one way for output to go wrong, and the job's "
                "two inputs are not its only channels.",
            ),
            Choice(
                "Only slow it down: the restore first waits for the loop to drain, and then it "
                "resumes.",
                False,
                "A restore waits for nothing to drain: every operator rolls back to the "
                "checkpoint and the sources read again from their recorded offsets.",
            ),
        ),
        hint="See 'On a cycle' in lesson 07b: what does at-least-once record on the back edge, "
        "and what does that leave out?",
        misconception="at-least-once never loses a record",
        lesson="07b",
    ),
)
