"""The ``dojo`` command-line tool: talks to the platform's API over HTTP, imports nothing of it."""
