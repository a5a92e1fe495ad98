"""The mentor's calculators: memory arithmetic a learner can ask for in words.

``table`` holds the shipped public model configurations, ``parse`` reads a
question into a request, ``memory`` does the arithmetic and keeps its
working, ``answer`` turns the working into Markdown. Which calculators a
module offers is decided by the module's catalog id (``answer.CALCULATORS``).
"""
