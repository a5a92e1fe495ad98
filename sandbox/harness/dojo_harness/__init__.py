"""The grading harness that runs inside the sandbox container.

Two processes under two uids: the harness (tests, expected values, the
report nonce) and the learner (the submitted code). They talk over a
socketpair carrying plain data only; see ``protocol``.
"""
