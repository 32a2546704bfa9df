"""The console in a real browser: Debian's chromium through chromium-driver, driven by Selenium.

Run by scripts/check-console (CI). Starts `hammock serve` on free ports, opens the console, creates a
record through the form and sees it in the table and the live log, sorts, edits, switches a fault on and
sees the next request fail, switches it off, deletes; checks the page's accessibility basics at laptop
and phone widths and with an admin token; saves screenshots. First, a page on another origin and a page
under a re-pointed name (DNS rebinding) try to drive and read the admin API, and are refused.

Last, a HAR assembled from chromium's DevTools protocol events (Network.*, as its own export holds them)
of the console's session is served by `hammock serve FILE.har`, and answers each API request as recorded.

Usage: python3 Tests/Console/console_test.py HAMMOCK-BINARY SCREENSHOT-DIRECTORY
"""
import atexit
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

HAMMOCK, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)
checked = 0
started = []


@atexit.register
def stop_servers():
    """Every server this script started is stopped, however it ends (a failed check included)."""
    for process in started:
        if process.poll() is None:
            process.kill()


def expect(condition, what):
    global checked
    checked += 1
    if not condition:
        raise AssertionError(what)


def serve(*arguments, config="Examples/people.json"):
    """`hammock serve` on a free port; its process and URL."""
    process = subprocess.Popen(
        [HAMMOCK, "serve", config, "--store", "memory", "--port", "0", *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started.append(process)
    deadline = time.time() + 20
    seen = []
    while time.time() < deadline:
        line = process.stdout.readline()
        seen.append(line)
        match = re.match(r"Hammock is serving .* at (http://\S+)$", line.strip())
        if match:
            return process, match.group(1)
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("hammock serve did not start: " + "".join(seen)[-2000:])


def browser(width, height, *extra, network=False):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                     "--disable-gpu", "--lang=en-US", *extra]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    # `performance` carries the DevTools protocol's Network events, what a HAR export is made from.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", **({"performance": "ALL"} if network else {})})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, condition, what, seconds=10):
    """Until `condition()` holds; an element replaced while it is read (the page redraws tables) is a no."""
    global checked
    checked += 1
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            if condition():
                return
        except Exception as error:  # noqa: BLE001 (stale or not yet there: try again)
            last = error
        time.sleep(0.05)
    driver.save_screenshot(os.path.join(SHOTS, "failed.png"))
    raise AssertionError(f"waited {seconds} s for {what}" + (f" (last: {type(last).__name__})" if last else ""))


def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#records tbody tr")


def log_rows(driver):
    return [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#log tbody tr")]


def count_of(driver, resource):
    return driver.find_element(By.CSS_SELECTOR, f'[data-count="{resource}"]').text


def check_accessibility(driver, where):
    """Every control named, headings in order, the page as wide as the window (no sideways scrolling)."""
    problems = driver.execute_script("""
        const problems = [];
        for (const control of document.querySelectorAll("input, select, textarea")) {
          if (control.type === "hidden" || control.closest("[hidden]")) continue;
          const label = control.id && document.querySelector(`label[for="${control.id}"]`);
          if (!label && !control.getAttribute("aria-label")) problems.push(`unlabelled ${control.outerHTML.slice(0, 80)}`);
        }
        for (const button of document.querySelectorAll("button")) {
          if (!(button.getAttribute("aria-label") || button.textContent.trim())) problems.push("a button without a name");
        }
        let last = 0;
        for (const heading of document.querySelectorAll("h1, h2, h3, h4")) {
          const level = Number(heading.tagName[1]);
          if (level > last + 1) problems.push(`heading ${heading.tagName} after h${last}`);
          last = level;
        }
        if (document.documentElement.scrollWidth > window.innerWidth + 1) {
          problems.push(`the page is ${document.documentElement.scrollWidth}px wide in a ${window.innerWidth}px window`);
        }
        if (!document.documentElement.lang) problems.push("no lang");
        return problems;
    """)
    expect(problems == [], f"{where}: {problems}")


def browser_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


ATTACK_PAGE = """<!doctype html><html><body><h1>A page on another origin</h1>
<iframe name="sink" hidden></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="MOCK/__hammock/reset">
<input name='{"x":"' value='"}'></form>
<script>
const mock = "MOCK";
window.results = {};
async function attempt(name, run) {
  try { window.results[name] = await run(); } catch (error) { window.results[name] = "refused: " + error.name; }
}
(async () => {
  document.getElementById("form").submit();
  await attempt("reset", () => fetch(mock + "/__hammock/reset", {method: "POST", mode: "no-cors",
    headers: {"Content-Type": "text/plain"}, body: "{}"}).then(r => r.type));
  await attempt("route", () => fetch(mock + "/__hammock/routes", {method: "POST", mode: "no-cors",
    headers: {"Content-Type": "text/plain"}, body: JSON.stringify({method: "GET", path: "/owned", body: {owned: true}})})
    .then(r => r.type));
  await attempt("journal", () => fetch(mock + "/__hammock/requests").then(r => r.text()));
  await attempt("json", () => fetch(mock + "/__hammock/reset", {method: "POST",
    headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => String(r.status)));
  window.done = true;
})();
</script></body></html>"""


def check_hostile_pages():
    """A page on another origin tries a form POST and no-cors writes, reads the journal, and sends a real
    JSON write (which needs a preflight); a page whose name was re-pointed at the mock (DNS rebinding,
    played with chromium's host resolver rules) reads and writes the admin API as its own origin. Each is
    refused, and nothing in the mock changes."""
    server, url = serve("--quiet")
    port = url.rsplit(":", 1)[1]
    # The mock's own requests, with a secret, which a page must not read.
    request = urllib.request.Request(url + "/people", headers={"Authorization": "Bearer app-secret"})
    with urllib.request.urlopen(request) as response:
        expect(response.status == 200, "the app's request")
    page = tempfile.mkdtemp()
    with open(os.path.join(page, "attack.html"), "w") as file:
        file.write(ATTACK_PAGE.replace("MOCK", url))
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=page)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    driver = browser(1000, 800, "--host-resolver-rules=MAP rebind.test 127.0.0.1")
    try:
        driver.get(f"http://127.0.0.1:{attacker.server_address[1]}/attack.html")
        wait_for(driver, lambda: driver.execute_script("return window.done === true"), "the page's attempts")
        results = driver.execute_script("return window.results")
        expect(results["journal"].startswith("refused"), f"another origin cannot read the journal: {results['journal'][:80]}")
        expect(results["json"].startswith("refused"), f"a JSON write from another origin fails its preflight: {results}")
        time.sleep(0.5)  # the form's navigation, which the page does not wait for
        with urllib.request.urlopen(url + "/people") as response:
            expect(len(json.load(response)) == 5, "no reset reached the mock (five people, one more GET)")
        try:
            urllib.request.urlopen(url + "/owned")
            expect(False, "no route was added")
        except urllib.error.HTTPError as error:
            expect(error.code == 404, "the page's route is not there")
        with urllib.request.urlopen(url + "/__hammock/requests") as response:
            journal = response.read().decode()
            expect("app-secret" not in journal and "Bearer [redacted]" in journal, "the journal hides the app's token")

        # Rebinding: the page's origin is http://rebind.test:PORT, the mock's own port.
        driver.get(f"http://rebind.test:{port}/people")
        statuses = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            (async () => {
              const read = await fetch("/__hammock/requests").then(r => r.status);
              const write = await fetch("/__hammock/reset", {method: "POST", headers: {"Content-Type": "application/json"},
                body: "{}"}).then(r => r.status);
              const page = await fetch("/__hammock/", {headers: {Accept: "text/html"}}).then(r => r.status);
              done([read, write, page]);
            })();""")
        expect(statuses == [403, 403, 403], f"a re-pointed name is refused on every admin path: {statuses}")
        with urllib.request.urlopen(url + "/people") as response:
            expect(len(json.load(response)) == 5, "the data is still there")
        # The same browser on the mock's own name works as before.
        driver.get(url + "/__hammock/")
        wait_for(driver, lambda: "(5 records)" in text(driver, "page-status"), "the console on its own origin")
    finally:
        driver.quit()
        attacker.shutdown()
        server.terminate()
        server.wait(10)


def devtools_har(driver):
    """A HAR 1.2 document of what the page sent and received, from chromium's DevTools protocol events
    (Network.requestWillBeSent, responseReceived, loadingFinished) and Network.getResponseBody, the way
    DevTools' own "Save all as HAR" assembles it. Streams still open (the live log) are left out."""
    requests, responses, finished = {}, {}, set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            requests[params["requestId"]] = (params["request"], params["wallTime"])
        elif message["method"] == "Network.responseReceived":
            responses[params["requestId"]] = params["response"]
        elif message["method"] == "Network.loadingFinished":
            finished.add(params["requestId"])
    entries = []
    for request_id, (request, wall_time) in requests.items():
        response = responses.get(request_id)
        if response is None or request_id not in finished or request["url"].startswith("data:"):
            continue
        try:
            body = driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": request_id})
        except Exception:  # noqa: BLE001 (a body the browser no longer holds: DevTools exports it without)
            body = {"body": "", "base64Encoded": False}
        content = {"size": len(body["body"]), "mimeType": response.get("mimeType", ""), "text": body["body"]}
        if body["base64Encoded"]:
            content["encoding"] = "base64"
        har_request = {
            "method": request["method"], "url": request["url"], "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": k, "value": v} for k, v in request.get("headers", {}).items()],
            "queryString": [], "headersSize": -1, "bodySize": len(request.get("postData", "")),
        }
        if "postData" in request:
            har_request["postData"] = {"mimeType": request["headers"].get("Content-Type", ""), "text": request["postData"]}
        entries.append({
            "startedDateTime": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(wall_time)), "time": 0,
            "request": har_request,
            "response": {
                "status": response["status"], "statusText": response.get("statusText", ""),
                "httpVersion": response.get("protocol", "http/1.1").upper(), "cookies": [],
                "headers": [{"name": k, "value": v} for k, v in response.get("headers", {}).items()],
                "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1,
            },
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0},
        })
    return {"log": {"version": "1.2", "creator": {"name": "chromium DevTools protocol", "version": "1"},
                    "pages": [], "entries": entries}}


def check_devtools_har():
    """The console's session in chromium, exported as DevTools would, served back by `hammock serve`."""
    server, url = serve("--quiet")
    driver = browser(1400, 1000, network=True)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.get(url + "/__hammock/")
        wait_for(driver, lambda: "(5 records)" in text(driver, "page-status"), "the people to load (HAR)")
        driver.find_element(By.ID, "field-name").send_keys("Ada Lovelace")
        driver.find_element(By.ID, "save").click()
        wait_for(driver, lambda: text(driver, "data-status") == "Created people 6.", "the create (HAR)")
        time.sleep(0.5)
        har = devtools_har(driver)
    finally:
        driver.quit()
        server.terminate()
        server.wait(10)
    api = [e for e in har["log"]["entries"] if "/__hammock" not in e["request"]["url"]]
    expect(any(e["request"]["method"] == "POST" for e in api), "the HAR has the console's POST /people")
    expect(any(e["request"]["method"] == "GET" and "/people" in e["request"]["url"] for e in api),
           "the HAR has the console's GET of people")
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "console.har")
    with open(path, "w") as file:
        json.dump(har, file)
    replay, replay_url = serve("--quiet", config=path)
    try:
        for entry in api:
            request = entry["request"]
            parts = urllib.parse.urlsplit(request["url"])
            target = replay_url + parts.path + ("?" + parts.query if parts.query else "")
            data = request.get("postData", {}).get("text")
            call = urllib.request.Request(target, method=request["method"],
                                          data=data.encode() if data is not None else None,
                                          headers={"Content-Type": "application/json"} if data is not None else {})
            try:
                with urllib.request.urlopen(call) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as error:
                status, body = error.code, error.read()
            recorded = entry["response"]
            expect(status == recorded["status"], f"{request['method']} {target}: {status}, recorded {recorded['status']}")
            if recorded["content"].get("mimeType") == "application/json" and recorded["content"]["text"]:
                expect(json.loads(body) == json.loads(recorded["content"]["text"]),
                       f"{request['method']} {target} answers what chromium recorded")
    finally:
        replay.terminate()
        replay.wait(10)


def main():
    check_hostile_pages()
    server, url = serve("--quiet")
    driver = browser(1400, 1000)
    try:
        driver.get(url + "/__hammock/")
        wait_for(driver, lambda: "(5 records)" in text(driver, "page-status"), "the people to load")
        expect(driver.title == "Hammock console", "the page's title")
        expect(count_of(driver, "people") == "5" and count_of(driver, "cars") == "5", "record counts")
        expect("GET, HEAD, POST /people/:id/cars" in text(driver, "resources"), "the routes of each resource")
        wait_for(driver, lambda: "Following" in text(driver, "log-status"), "the live log to connect")
        check_accessibility(driver, "laptop width")

        # Create through the form: the table, the count and the live log show it.
        driver.find_element(By.ID, "field-name").send_keys("Grace Hopper")
        driver.find_element(By.ID, "field-numberOfKids").send_keys("0")
        driver.find_element(By.ID, "field-kilometersWalked").send_keys("12.5")
        driver.find_element(By.ID, "save").click()
        wait_for(driver, lambda: text(driver, "data-status") == "Created people 6.", "the create")
        wait_for(driver, lambda: any("Grace Hopper" in row.text for row in rows(driver)), "the new row")
        wait_for(driver, lambda: count_of(driver, "people") == "6", "the count to follow")
        wait_for(driver, lambda: any(re.search(r"POST\s+/people\s+201", row) for row in log_rows(driver)),
                 "the POST in the live log")
        with urllib.request.urlopen(url + "/people/6") as response:
            expect(json.load(response)["kilometersWalked"] == 12.5, "the record is in the mock, typed")

        # Sort by name, descending: Rosa Garcia first.
        driver.find_element(By.XPATH, "//table[@id='records']//th/button[text()='name']").click()
        wait_for(driver, lambda: driver.find_element(By.XPATH, "//table[@id='records']//th[button[text()='name']]")
                 .get_attribute("aria-sort") == "ascending", "ascending sort")
        driver.find_element(By.XPATH, "//table[@id='records']//th/button[text()='name']").click()
        wait_for(driver, lambda: rows(driver)[0].text.startswith("3 Rosa Garcia"), "Rosa first, descending")

        # Edit.
        driver.find_element(By.CSS_SELECTOR, '[aria-label="Edit people 6"]').click()
        field = driver.find_element(By.ID, "field-name")
        expect(field.get_attribute("value") == "Grace Hopper", "the form holds the record")
        field.clear()
        field.send_keys("Grace B. Hopper")
        driver.find_element(By.ID, "save").click()
        wait_for(driver, lambda: text(driver, "data-status") == "Saved people 6.", "the edit")
        wait_for(driver, lambda: any("Grace B. Hopper" in row.text for row in rows(driver)), "the edited row")
        wait_for(driver, lambda: any(re.search(r"PATCH\s+/people/6\s+200", row) for row in log_rows(driver)),
                 "the PATCH in the live log")
        # The whole page, as docs/console.png shows it.
        driver.execute_script("window.scrollTo(0, 0)")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, height + 140)
        driver.save_screenshot(os.path.join(SHOTS, "console.png"))
        driver.set_window_size(1400, 1000)

        # A fault: the next request fails, in the page, for another client, and in the log.
        Select(driver.find_element(By.ID, "fault-kind")).select_by_value("503")
        driver.find_element(By.ID, "add-fault").click()
        wait_for(driver, lambda: "*: answers 503" in text(driver, "faults"), "the fault in force")
        Select(driver.find_element(By.ID, "per-page")).select_by_value("25")
        wait_for(driver, lambda: text(driver, "data-status").startswith("503"), "the page's next request to fail")
        try:
            urllib.request.urlopen(url + "/people")
            expect(False, "a client's request during the fault")
        except urllib.error.HTTPError as error:
            expect(error.code == 503, f"another client gets 503, not {error.code}")
        wait_for(driver, lambda: any(re.search(r"GET\s+/people.*503 \(fault\)", row) for row in log_rows(driver)),
                 "the fault in the live log")
        driver.save_screenshot(os.path.join(SHOTS, "console-fault.png"))
        # A fault a test adds by name meanwhile is left alone when the console switches its own off.
        added = urllib.request.Request(url + "/__hammock/faults/from-a-test", method="PUT",
                                       data=b'{"route": "GET /elsewhere", "status": 500}',
                                       headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(added) as response:
            expect(response.status == 201, "a named fault added over the admin API")
        driver.find_element(By.CSS_SELECTOR, "button[aria-label^='Switch off: *: answers 503']").click()
        wait_for(driver, lambda: "*: answers 503" not in text(driver, "faults"), "the console's fault switched off")
        wait_for(driver, lambda: "GET /elsewhere: answers 500 [from-a-test]" in text(driver, "faults"),
                 "the test's fault listed after the reload")
        with urllib.request.urlopen(url + "/__hammock/faults") as response:
            remaining = [fault["name"] for fault in json.load(response)]
        expect(remaining == ["from-a-test"], f"only the console's fault went, not {remaining}")
        driver.find_element(By.ID, "clear-faults").click()
        wait_for(driver, lambda: "No fault in force." in text(driver, "faults"), "the fault switched off")
        with urllib.request.urlopen(url + "/people") as response:
            expect(response.status == 200, "requests pass again")

        # Latency through the admin API.
        for element_id, value in [("latency-min", "0.01"), ("latency-max", "0.02")]:
            field = driver.find_element(By.ID, element_id)
            field.clear()
            field.send_keys(value)
        driver.find_element(By.CSS_SELECTOR, "#latency-form button[type=submit]").click()
        wait_for(driver, lambda: text(driver, "faults-status") == "Latency 0.01 to 0.02 s.", "the latency set")
        with urllib.request.urlopen(url + "/__hammock/latency") as response:
            expect(json.load(response) == {"min": 0.01, "max": 0.02}, "the server's latency")
        driver.find_element(By.ID, "clear-latency").click()
        wait_for(driver, lambda: text(driver, "faults-status") == "No latency.", "the latency cleared")

        # Delete, confirmed.
        driver.find_element(By.CSS_SELECTOR, '[aria-label="Delete people 6"]').click()
        WebDriverWait(driver, 5).until(expected_conditions.alert_is_present()).accept()
        wait_for(driver, lambda: text(driver, "data-status") == "Deleted people 6.", "the delete")
        wait_for(driver, lambda: count_of(driver, "people") == "5", "the count back to 5")
        # The only errors the browser logs are the failed loads the fault caused.
        errors = [error for error in browser_errors(driver) if "status of 503" not in error]
        expect(errors == [], f"errors in the browser: {errors}")
    finally:
        driver.quit()

    # A phone's width: one column, nothing wider than the screen.
    phone = browser(390, 844)
    try:
        phone.get(url + "/__hammock/")
        wait_for(phone, lambda: "(5 records)" in text(phone, "page-status"), "the people on a phone")
        check_accessibility(phone, "phone width")
        phone.save_screenshot(os.path.join(SHOTS, "console-phone.png"))
    finally:
        phone.quit()
        server.terminate()
        server.wait(10)

    # With an admin token: the page loads without it, asks, and works with it.
    secured, url = serve("--quiet", "--admin-token", "s3cret")
    driver = browser(1400, 1000)
    try:
        driver.get(url + "/__hammock/")
        wait_for(driver, lambda: driver.find_element(By.ID, "token-form").is_displayed(), "the token prompt")
        try:
            urllib.request.urlopen(url + "/__hammock/resources")
            expect(False, "the admin API without the token")
        except urllib.error.HTTPError as error:
            expect(error.code == 401, "the admin API still wants its token")
        driver.find_element(By.ID, "token").send_keys("s3cret")
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait_for(driver, lambda: "(5 records)" in text(driver, "page-status"), "the data with the token")
        wait_for(driver, lambda: "Following" in text(driver, "log-status"), "the live log with the token")
    finally:
        driver.quit()
        secured.terminate()
        secured.wait(10)
    # Required fields and defaults (Examples/shop.json): the browser will not send a create without the
    # name, and the server fills the default.
    shop, url = serve("--quiet", config="Examples/shop.json")
    driver = browser(1400, 1000)
    try:
        driver.get(url + "/__hammock/")
        wait_for(driver, lambda: "records" in text(driver, "page-status"), "the categories")
        Select(driver.find_element(By.ID, "resource")).select_by_value("products")
        wait_for(driver, lambda: "(2 records)" in text(driver, "page-status"), "the products")
        expect(driver.find_element(By.CSS_SELECTOR, 'label[for="field-name"]').text == "name (string, required)",
               "a required field says so")
        driver.find_element(By.ID, "field-price").send_keys("3")
        driver.find_element(By.ID, "save").click()
        time.sleep(0.5)
        expect(count_of(driver, "products") == "2", "no create without the required name")
        driver.find_element(By.ID, "field-name").send_keys("Rake")
        driver.find_element(By.ID, "save").click()
        wait_for(driver, lambda: text(driver, "data-status") == "Created products 3.", "the create with the name")
        with urllib.request.urlopen(url + "/products/3") as response:
            expect(json.load(response)["inStock"] is False, "the default filled in")
    finally:
        driver.quit()
        shop.terminate()
        shop.wait(10)
    check_devtools_har()
    print(f"check-console: ok: {checked} checks in chromium; screenshots in {SHOTS}")


if __name__ == "__main__":
    main()
