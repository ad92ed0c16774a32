"""``make cluster``: a cluster to try on this machine.

A throwaway PostgreSQL (tests/postgres.py: initdb in a temp dir, unix socket only) and
Redis (tests/redis_server.py: a loopback port, no persistence), then three workers
(``htttx-server --db ... --redis ...``) on 127.0.0.1 ports 8101, 8102 and 8103 (or
``--ports``). Prints their URLs and waits. A worker that exits (say, killed with
``kill -9`` to watch the others take over its games) is reported, and the others go on;
Ctrl-C (or the last worker exiting) stops the workers, then Redis and PostgreSQL, and
removes their data.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import PostgresCluster, _postgres_bindir  # noqa: E402
from tests.redis_server import RedisServer, redis_executable  # noqa: E402


def _wait_for_health(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> bool:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            time.sleep(0.2)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", default="8101,8102,8103", help="default %(default)s")
    args = parser.parse_args()
    ports = [int(port) for port in args.ports.split(",")]
    bindir, redis_bin = _postgres_bindir(), redis_executable()
    if bindir is None or redis_bin is None:
        print("PostgreSQL and redis-server are needed: `make postgres redis`", file=sys.stderr)
        return 1
    postgres, redis = PostgresCluster(bindir), RedisServer(redis_bin)
    workers: list[subprocess.Popen[bytes]] = []
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        postgres.start()
        redis.start()
        db_url = postgres.new_database()
        for index, port in enumerate(ports, 1):
            command = [
                sys.executable, "-m", "game.serve",
                "--port", str(port),
                "--db", db_url,
                "--redis", redis.url,
                "--worker-id", f"worker-{index}",
                "--log-level", "warning",
            ]  # fmt: skip
            # A session of its own: Ctrl-C reaches this script only, which stops each
            # worker with one SIGINT (a second one makes uvicorn quit mid-shutdown).
            workers.append(
                subprocess.Popen(
                    command, cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True
                )
            )
            # One at a time: the first cleans up after a previous run, the others join it.
            if not _wait_for_health(f"http://127.0.0.1:{port}", workers[-1]):
                print(f"worker-{index} on port {port} did not start", file=sys.stderr)
                return 1
        print(f"PostgreSQL  {db_url}")
        print(f"Redis       {redis.url}")
        for index, port in enumerate(ports, 1):
            print(f"worker-{index}    http://127.0.0.1:{port}/   (GET /cluster, /health)")
        print("Ctrl-C stops them all.", flush=True)
        running = dict(enumerate(workers, 1))
        while running:
            time.sleep(0.5)
            for index, worker in list(running.items()):
                if worker.poll() is not None:
                    del running[index]
                    print(
                        f"worker-{index} exited (status {worker.returncode}); "
                        f"{len(running)} worker(s) go on",
                        file=sys.stderr,
                        flush=True,
                    )
        print("every worker exited: stopping Redis and PostgreSQL", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGINT)
        for worker in workers:
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    sys.exit(main())
