"""The sandbox image: its tag (``tag``) and how it is built (``python -m sandbox.build``)."""
