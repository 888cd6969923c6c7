"""The static model: a network of processes joined by directed channels."""

from __future__ import annotations

import pytest

from snapshotlib import Channel, Network, NetworkError

# ------------------------------------------------------------------ validation


def test_channel_to_an_unknown_process_is_an_error_naming_it():
    with pytest.raises(NetworkError, match=r"channel #2 P2->P9: unknown process 'P9'"):
        Network(["P1", "P2"], [("P1", "P2"), ("P2", "P9")])


def test_channel_from_an_unknown_process_is_an_error_naming_it():
    with pytest.raises(NetworkError, match=r"unknown process 'Q'"):
        Network(["P1", "P2"], [("Q", "P1"), ("P1", "P2"), ("P2", "P1")])


def test_self_loop_is_an_error_naming_the_channel():
    with pytest.raises(NetworkError, match=r"channel #3 P1->P1 is a self-loop"):
        Network(["P1", "P2"], [("P1", "P2"), ("P2", "P1"), ("P1", "P1")])


def test_duplicate_channel_is_an_error_naming_the_channel():
    with pytest.raises(NetworkError, match=r"channel #3 P1->P2 is listed twice"):
        Network(["P1", "P2"], [("P1", "P2"), ("P2", "P1"), ("P1", "P2")])


def test_opposite_channels_are_not_duplicates():
    net = Network(["P1", "P2"], [("P1", "P2"), ("P2", "P1")])
    assert [str(c) for c in net.channels] == ["P1->P2", "P2->P1"]


def test_channel_that_is_not_a_pair_is_an_error_naming_its_position():
    with pytest.raises(NetworkError, match=r"channel #2 is .*expected a \[src, dst\] pair"):
        Network(["P1", "P2"], [("P1", "P2"), ("P2", "P1", "P2")])


def test_process_unreachable_from_the_first_is_an_error_naming_it():
    # P1 reaches nobody: the marker of an initiator P1 could never reach P2 or P3
    with pytest.raises(NetworkError, match=r"not strongly connected: P2 cannot be reached from P1"):
        Network(["P1", "P2", "P3"], [("P2", "P1"), ("P3", "P1"), ("P2", "P3"), ("P3", "P2")])


def test_first_process_unreachable_from_another_is_an_error_naming_both():
    # a path P1 -> P2 -> P3 but no way back
    with pytest.raises(NetworkError, match=r"not strongly connected: P1 cannot be reached from P2"):
        Network(["P1", "P2", "P3"], [("P1", "P2"), ("P2", "P3")])


def test_two_disconnected_cycles_are_not_strongly_connected():
    with pytest.raises(NetworkError, match=r"P3 cannot be reached from P1"):
        Network(
            ["P1", "P2", "P3", "P4"],
            [("P1", "P2"), ("P2", "P1"), ("P3", "P4"), ("P4", "P3")],
        )


def test_empty_process_list_is_an_error():
    with pytest.raises(NetworkError, match=r"at least one process"):
        Network([])


def test_duplicate_process_is_an_error_naming_it():
    with pytest.raises(NetworkError, match=r"process 'P2' is listed twice"):
        Network(["P1", "P2", "P2"])


@pytest.mark.parametrize("name", ["", 3, None])
def test_process_names_must_be_non_empty_strings(name):
    with pytest.raises(NetworkError, match=r"non-empty strings, got"):
        Network(["P1", name])


def test_process_name_may_not_contain_the_channel_arrow():
    with pytest.raises(NetworkError, match=r"'P1->P2' may not contain '->'"):
        Network(["P1->P2", "P3"])


def test_unknown_layout_name_is_an_error_naming_it_and_the_choices():
    with pytest.raises(NetworkError, match=r"unknown channel layout 'star'.*'complete', 'ring'"):
        Network(["P1", "P2"], "star")


def test_network_error_is_a_value_error():
    assert issubclass(NetworkError, ValueError)


# --------------------------------------------------------------------- layouts


def test_complete_layout_joins_every_ordered_pair_of_distinct_processes():
    net = Network(["a", "b", "c"], "complete")
    assert [str(c) for c in net.channels] == ["a->b", "a->c", "b->a", "b->c", "c->a", "c->b"]


def test_complete_is_the_default_layout():
    assert Network(["a", "b", "c"]).channels == Network(["a", "b", "c"], "complete").channels


def test_ring_layout_joins_each_process_to_the_next_and_wraps_around():
    net = Network(["a", "b", "c", "d"], "ring")
    assert [str(c) for c in net.channels] == ["a->b", "b->c", "c->d", "d->a"]


def test_ring_of_two_is_one_channel_each_way():
    assert [str(c) for c in Network(["a", "b"], "ring").channels] == ["a->b", "b->a"]


def test_bidirectional_ring_has_both_neighbours_of_every_process():
    net = Network(["a", "b", "c", "d"], "bidirectional-ring")
    assert sorted(str(c) for c in net.channels) == sorted(
        ["a->b", "b->c", "c->d", "d->a", "b->a", "c->b", "d->c", "a->d"]
    )


def test_bidirectional_ring_of_two_lists_each_channel_once():
    assert sorted(str(c) for c in Network(["a", "b"], "bidirectional-ring").channels) == [
        "a->b",
        "b->a",
    ]


def test_single_process_network_has_no_channels():
    for layout in ("complete", "ring", "bidirectional-ring"):
        assert Network(["solo"], layout).channels == ()


def test_processes_keep_the_order_given():
    assert Network(["z", "a", "m"]).processes == ("z", "a", "m")


# ------------------------------------------------------------ inputs / outputs


def test_inputs_are_the_channels_leading_to_a_process():
    net = Network(["a", "b", "c"])
    assert net.inputs("a") == (Channel("b", "a"), Channel("c", "a"))


def test_outputs_are_the_channels_leaving_a_process():
    net = Network(["a", "b", "c"], "ring")
    assert net.outputs("b") == (Channel("b", "c"),)
    assert net.inputs("b") == (Channel("a", "b"),)


def test_channel_index_is_the_position_in_channels():
    net = Network(["a", "b", "c"], "ring")
    assert [net.channel_index(c) for c in net.channels] == [0, 1, 2]


def test_looking_up_a_missing_channel_names_it_and_the_existing_ones():
    net = Network(["a", "b", "c"], "ring")
    with pytest.raises(NetworkError, match=r"no channel a->c \(channels from a: a->b\)"):
        net.channel("a", "c")
    with pytest.raises(NetworkError, match=r"no channel c->b"):
        net.channel_index(Channel("c", "b"))


def test_channel_parses_from_its_arrow_form_and_prints_back():
    c = Channel.parse("P1 -> P2")
    assert c == Channel("P1", "P2")
    assert str(c) == "P1->P2"


@pytest.mark.parametrize("bad", ["P1P2", "->P2", "P1->"])
def test_channel_without_two_ends_is_an_error(bad):
    with pytest.raises(NetworkError, match=r"not of the form 'SRC->DST'"):
        Channel.parse(bad)


# ------------------------------------------------------------------------ FIFO


def test_channels_are_fifo_by_default():
    assert Network(["a", "b"]).fifo is True


def test_non_fifo_channels_on_request():
    net = Network(["a", "b"], fifo=False)
    assert net.fifo is False
    assert "non-FIFO" in repr(net)
