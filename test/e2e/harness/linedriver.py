"""The C drivers built on line_driver.c, run from Python."""

import json
import subprocess
import threading
import time

from harness import Failure, expect


class LineDriver:
    """A driver answering one JSON object per line of names on its stdin
    (ns_policy_driver, quota_driver: line_driver.c), its stderr collected
    for the tests to read (warnings) and to show on failure."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stderr_lines = []
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def stderr_tail(self):
        return "".join(self.stderr_lines)[-2000:]

    def ask(self, names):
        self.proc.stdin.write(" ".join(names) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        expect(line, f"driver exited ({self.proc.poll()}): {self.stderr_tail()}")
        return json.loads(line)

    def wait_for(self, names, done, what, timeout=20):
        """Asks about names until done(answer) holds; returns that answer."""
        deadline = time.monotonic() + timeout
        got = None
        while time.monotonic() < deadline:
            got = self.ask(names)
            if done(got):
                return got
            time.sleep(0.05)
        raise Failure(f"{what}: the driver's answer {got} never became right\n"
                      f"driver stderr: {self.stderr_tail()}")

    def warnings(self, *parts):
        """The warning lines containing every one of parts."""
        return [ln for ln in self.stderr_lines
                if "level=warn" in ln and all(p in ln for p in parts)]

    def wait_warnings(self, count, *parts, timeout=10):
        """The warning lines containing parts, once there are at least count
        of them (or the timeout has passed): the driver's answer can show a
        change before its stderr line has reached the reader thread."""
        deadline = time.monotonic() + timeout
        while len(self.warnings(*parts)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.warnings(*parts)

    def quit(self):
        """A clean stop: "quit", then exit status 0."""
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        rc = self.proc.wait(15)
        expect(rc == 0, f"driver exit {rc}: {self.stderr_tail()}")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(15)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
