"""serve's dashboard in headless Chromium for a test (tests/e2e/cdp.py; Debian's
python3 with python3-websocket): serve started and the page opened, both
closed at the test's cleanup, and a look at the page repeated until it shows
what the test waits for."""
import time

from cdp import Browser
from test_serve import Serve


def open_dashboard(case, scenario, args, env=None):
    """(server, page): `serve` over `scenario` with `args` and its dashboard,
    closed (page, browser, then serve) when `case` cleans up."""
    server = Serve(scenario, args, case.tmp, env=env)
    case.addCleanup(server.kill)
    browser = Browser()
    case.addCleanup(browser.close)
    page = browser.new_page()
    case.addCleanup(page.close)
    page.navigate(f"http://{server.host}:{server.port}/")
    return server, page


def poll(look, cond, timeout, every=0.1, each=None):
    """(True, value) once `cond(look())` holds, calling `each()` before each
    look; (False, the last value) after `timeout` s."""
    end = time.monotonic() + timeout
    while True:
        if each:
            each()
        value = look()
        if cond(value):
            return True, value
        if time.monotonic() >= end:
            return False, value
        time.sleep(every)
