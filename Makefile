# The two quick-start commands: `make run` and `make test`.
.PHONY: run test image lint

run:
	scripts/run.sh

test:
	scripts/test.sh

image:
	scripts/bootstrap.sh

lint:
	.venv/bin/ruff check .
	SECRET_KEY=lint .venv/bin/mypy .
