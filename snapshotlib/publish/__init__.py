"""The course handed out: ``snapshotlib course init`` copies the learner's course out of
the installed package, ``snapshotlib course release`` writes what staff publish to
learners (no solutions) and what they keep (solutions, autograder zips, grading guide).
"""
