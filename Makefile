# Every target sets up .venv itself, so a fresh clone needs nothing but Python 3.11+.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
STAMP_UI := $(VENV)/.installed-ui

.PHONY: run test lint bench clean postgres redis chromium ui screenshots cluster

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# After installing, SearchBot's kernels are compiled into numba's disk cache (some 15 s),
# so that the servers started next load them in 2 s instead of compiling at their start.
$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	$(PY) -m bot.bots.search
	touch $@

$(STAMP_UI): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[ui]"
	$(PY) -m bot.bots.search
	touch $@ $(STAMP_RUN)

$(STAMP_DEV): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev,ui]"
	$(PY) -m bot.bots.search
	touch $@ $(STAMP_RUN) $(STAMP_UI)

# The game server with the example bots on 127.0.0.1:8001 (web page at /; SearchBot
# evaluates the games someone watches); plays one demo game at start, keeps a quiet
# ladder of the example bots going (one game at a time, at most 6 a minute: the
# leaderboard fills, and a person in the desktop client's Play online queue who waits
# gets a bot), and runs until Ctrl-C. (python -m game.demo still plays an offline game.)
run: $(STAMP_RUN)
	$(PY) -m game.serve --demo --analysis-bot search \
		--ladder --ladder-hosted-bots --ladder-concurrency 1 --ladder-rate 6

# The desktop client (PyQt5); connects to http://127.0.0.1:8001 (make run) by default.
ui: $(STAMP_UI)
	$(PY) -m ui.app

# PNGs of the desktop client and of the web page (headless Chromium, desktop and phone
# widths) for the README, each made against a server of its own.
screenshots: $(STAMP_DEV) chromium
	QT_QPA_PLATFORM=offscreen $(PY) -m ui.screenshots docs/screenshots
	$(PY) tools/web_screenshots.py docs/screenshots

lint: $(STAMP_DEV)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy .

# The store tests start a throwaway PostgreSQL server of their own (tests/test_store.py);
# this installs the server binaries if they are absent (Debian/Ubuntu, root or sudo).
# PG_BINDIR, if set, names the directory holding initdb and pg_ctl instead.
postgres:
	@if [ -n "$$PG_BINDIR" ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
		|| command -v initdb >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "Installing PostgreSQL for the store tests"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			$$sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
	else \
		echo "PostgreSQL server binaries (initdb, pg_ctl) are needed: install them or set PG_BINDIR" >&2; \
		exit 1; \
	fi

# The cluster's tests start a throwaway redis-server of their own (tests/redis_server.py);
# this installs it if it is absent (Debian/Ubuntu, root or sudo). REDIS_SERVER, if set,
# names the redis-server executable instead.
redis:
	@if [ -n "$$REDIS_SERVER" ] || command -v redis-server >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "Installing Redis for the cluster's tests"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			$$sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null; \
	else \
		echo "redis-server is needed for the cluster's tests: install it or set REDIS_SERVER" >&2; \
		exit 1; \
	fi

# A cluster to try: a throwaway PostgreSQL and Redis and three workers on 127.0.0.1
# ports 8101-8103 (tools/cluster.py); Ctrl-C stops them all and removes their data.
cluster: $(STAMP_DEV) postgres redis
	$(PY) tools/cluster.py

# The web page's tests drive the system's Chromium headless (tests/browser.py, through
# Playwright; no browser is downloaded). This installs Debian's chromium when absent;
# HTTTX_CHROMIUM, if set, names a Chromium or Chrome executable instead.
chromium:
	@if [ -n "$$HTTTX_CHROMIUM" ] || command -v chromium >/dev/null 2>&1 \
		|| command -v chromium-browser >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "Installing Chromium for the web page's tests"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			$$sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; \
	else \
		echo "Chromium is needed for the web page's tests: install it or set HTTTX_CHROMIUM" >&2; \
		exit 1; \
	fi

test: lint postgres redis chromium
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

# bench/cluster.py starts a throwaway PostgreSQL and Redis, as the tests do.
bench: $(STAMP_DEV) postgres redis
	@set -e; for script in bench/*.py; do \
		echo "== $$script"; $(PY) $$script; \
	done

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
