"""Suite-wide settings.

The desktop client's tests need a Qt platform; on a machine without a screen (CI) the
offscreen one is the only choice, so it is the default. ``make test`` sets it too.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The PostgreSQL server of the store's and the durability tests, started once per session.
# Headless Chromium for the web page's tests (tests/browser.py).
from tests.browser import chromium, web_page  # noqa: F401

# db_url (SQLite and PostgreSQL) and a GameStore on it, for the store's tests.
from tests.databases import db_url, store  # noqa: F401
from tests.postgres import postgres_cluster  # noqa: F401

# The Redis server of the cluster's tests (tests/redis_server.py).
from tests.redis_server import redis_server  # noqa: F401

# A cluster of in-process workers on them, for the cluster's tests (tests/test_cluster.py).
from tests.test_cluster import cluster  # noqa: F401

# The desktop client's tests: a game server per module and a shown main window.
from tests.ui_fixtures import server_url, window  # noqa: F401
