# The two quick-start commands: `make run` and `make test`.
.PHONY: run test image lint editor loadtest bench bench-gradebook bench-scale

run:
	scripts/run.sh

test:
	scripts/test.sh

# 200 simulated learners for 5 minutes against a throw-away stack (bench/README.md).
loadtest:
	scripts/loadtest.sh

image:
	scripts/bootstrap.sh

lint:
	.venv/bin/ruff check .
	SECRET_KEY=lint .venv/bin/mypy .
	.venv/bin/mypy --config-file sandbox/mypy-harness.ini

# Rebuild frontend/static/frontend/{editor,math}.bundle.js and KaTeX's css/fonts (committed; needs Node only here).
editor:
	cd frontend/editor && npm ci && npm run build

# Run latency through the real stack vs a naive grader and the warm floor (bench/README.md).
bench:
	scripts/bench.sh

# A course's gradebook at 500 learners x 20 assignments and 100k submissions, on PostgreSQL (bench/gradebook.py).
bench-gradebook:
	scripts/postgres.sh start
	DATABASE_URL="$$(scripts/postgres.sh url)" .venv/bin/python -m bench.gradebook

# Every page at a year of a busy deployment (1M submissions, 20M test rows) and at a tenth of it, on PostgreSQL (bench/scale.py).
bench-scale:
	scripts/postgres.sh start
	DATABASE_URL="$$(scripts/postgres.sh url)" .venv/bin/python -m bench.scale
