#!/usr/bin/python3
"""The console in a real browser: headless Chromium driven by Selenium against
`tributary console` and a real PostgreSQL cluster (issue 17).

Needs (scripts/test sets them): TRIBUTARY_TEST_DATABASE_URL (a superuser on a
throwaway cluster), TRIBUTARY_BIN. Debian packages: chromium, chromium-driver,
python3-selenium, postgresql-client. The test makes its own database on that
cluster, migrates it, seeds sources of the three kinds, a failing source whose
last error is hostile HTML, and groups with dead letters; then starts two
consoles (one with a token, one read-only) and checks what the pages show and
what their buttons do, in the database.

TRIBUTARY_SCREENSHOTS=DIR saves 1280x800 PNGs of the main pages there.

Waits are for states (WebDriverWait on a condition, or a bounded poll of the
database); nothing asserts on time.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid

try:
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    print(f'browser_console: {e} in {sys.executable}: apt-get install python3-selenium '
          '(Debian\'s, for /usr/bin/python3)', file=sys.stderr)
    sys.exit(1)

HOSTILE = '<img src=x onerror=alert(1)>'
TOKEN = 'browser-test-token-' + uuid.uuid4().hex
TOKEN_VAR = 'TRIBUTARY_BROWSER_TEST_TOKEN'
TOKEN_KEY = 'tributary.console.token'   # app.js keeps the token under this sessionStorage key
WAIT = 30                               # seconds a state may take to appear (a loaded CI machine)
SHOT_SIZE = (1280, 800)


def fail_setup(message):
    print('browser_console: ' + message, file=sys.stderr)
    sys.exit(1)


def required_env(name):
    value = os.environ.get(name)
    if not value:
        fail_setup(f'{name} is not set: run it through scripts/test (ctest -R browser_console)')
    return value


def quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for(condition, what, timeout=WAIT, every=0.1):
    """Polls condition() until it returns something true; fails naming what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for ' + what)
        time.sleep(every)


class Cluster:
    """A database of our own on the test cluster, reached with psql as its superuser."""

    def __init__(self, admin_url):
        self.admin_url = admin_url
        self.name = 'tributary_browser_%d' % os.getpid()
        parts = urllib.parse.urlsplit(admin_url)
        self.url = urllib.parse.urlunsplit(parts._replace(path='/' + self.name))

    def psql(self, sql, url=None):
        done = subprocess.run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url or self.url],
                              input=sql, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f'psql failed ({done.returncode}): {done.stderr.strip()}\n{sql}')
        return done.stdout.strip()

    def create(self):
        self.psql(f'DROP DATABASE IF EXISTS {self.name} WITH (FORCE); CREATE DATABASE {self.name};', self.admin_url)

    def drop(self):
        try:
            self.psql(f'DROP DATABASE IF EXISTS {self.name} WITH (FORCE);', self.admin_url)
        except AssertionError as e:
            print('browser_console: could not drop the test database: ' + str(e), file=sys.stderr)


class Console:
    """A `tributary console` process on a free port."""

    def __init__(self, binary, database_url, token_var=None):
        self.port = free_port()
        self.base = f'http://127.0.0.1:{self.port}/'
        self.log = tempfile.TemporaryFile(mode='w+')
        args = [binary, '--db', database_url, 'console', '--listen', f'127.0.0.1:{self.port}']
        if token_var:
            args += ['--token-env', token_var]
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self.answers, 'the console on port %d to answer /api/session' % self.port)

    def answers(self):
        if self.process.poll() is not None:
            raise AssertionError('the console exited with %s:\n%s' % (self.process.returncode, self.output()))
        try:
            with urllib.request.urlopen(self.base + 'api/session', timeout=5) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_browser():
    for program in ('chromium', 'chromedriver'):
        if not shutil.which(program):
            fail_setup(f'{program} is not installed (apt-get install chromium chromium-driver python3-selenium)')
    options = webdriver.ChromeOptions()
    for arg in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
                '--window-size=%d,%d' % SHOT_SIZE, '--force-prefers-reduced-motion', '--lang=en-US'):
        options.add_argument(arg)
    options.binary_location = shutil.which('chromium')
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service(shutil.which('chromedriver')), options=options)
    # Screenshots of exactly 1280x800, whatever the window's decorations take.
    driver.execute_cdp_cmd('Emulation.setDeviceMetricsOverride',
                           {'width': SHOT_SIZE[0], 'height': SHOT_SIZE[1], 'deviceScaleFactor': 1, 'mobile': False})
    driver.set_script_timeout(WAIT)
    return driver


class ConsoleInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = required_env('TRIBUTARY_BIN')
        cls.cluster = Cluster(required_env('TRIBUTARY_TEST_DATABASE_URL'))
        cls.screenshots = os.environ.get('TRIBUTARY_SCREENSHOTS')
        if cls.screenshots:
            os.makedirs(cls.screenshots, exist_ok=True)
        cls.consoles = []
        cls.driver = None
        cls.cluster.create()
        try:
            cls.seed()
            os.environ[TOKEN_VAR] = TOKEN
            cls.console = Console(cls.binary, cls.cluster.url, TOKEN_VAR)
            cls.consoles.append(cls.console)
            cls.read_only = Console(cls.binary, cls.cluster.url)
            cls.consoles.append(cls.read_only)
            cls.driver = start_browser()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.driver:
            cls.driver.quit()
        for console in cls.consoles:
            console.stop()
        if os.environ.get('TRIBUTARY_BROWSER_KEEP_DB') != '1':
            cls.cluster.drop()

    # ---- seeding ------------------------------------------------------------------------------

    @classmethod
    def cli(cls, *args):
        done = subprocess.run([cls.binary, '--db', cls.cluster.url, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f'tributary {" ".join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}')
        return done.stdout

    @classmethod
    def seed(cls):
        cls.cli('migrate')
        # Pulled sources nobody loads (port 9 is discard: never asked here), one pushed, one published.
        cls.cli('source', 'add', 'orders.eu', '--url', 'http://127.0.0.1:9/events',
                '--header', 'Authorization: Bearer not-shown-anywhere')
        cls.cli('source', 'add', 'orders.us', '--url', 'http://127.0.0.1:9/events?secret=hidden-query')
        cls.cli('source', 'add', 'broken.api', '--url', 'http://127.0.0.1:9/broken')
        cls.cli('source', 'add', 'hooks.github', '--push', '--insecure-no-auth')
        cls.cli('source', 'add', 'app.live', '--published')
        cls.seed_failing('broken.api', HOSTILE)
        cls.seed_history('orders.eu')
        # Groups over the published source, read from the beginning, that give up after one delivery.
        for group in ('billing', 'replays'):
            cls.cli('group', 'create', group, '--pattern', 'app.>', '--from', 'beginning', '--max-deliveries', '1')
        # A group that starts at the end of the log, for a reset to the beginning from the page.
        cls.cli('group', 'create', 'resets', '--pattern', 'app.>', '--from', 'end')
        # A group of 4 lanes (issue 28), held for an hour by a consumer whose name is hostile markup;
        # lane 3 then let go (its hold run out): a lane nobody holds.
        cls.cli('group', 'create', 'sharded', '--pattern', 'app.>', '--from', 'end', '--lanes', '4', '--lease', '1h')
        cls.cluster.psql(f"SELECT count(*) FROM tributary.consumer_next('sharded', {quote(HOSTILE)}, 1);")
        cls.cluster.psql("UPDATE tributary.group_lanes SET held_until = now() - interval '1 second' WHERE lane = 3;")
        for key in ('k1', 'k2'):
            cls.cluster.psql(f"SELECT tributary.publish('app.live', {quote(key)}, "
                             f"{quote(json.dumps({'order': key, 'html': '<b>bold?</b>'}))}::jsonb);")
        for group in ('billing', 'replays'):
            cls.fail_everything(group, HOSTILE if group == 'billing' else 'consumer gave up')
        # One maintainer's pass: the log's partitions observed, the events counted per minute.
        cls.cli('maintain', '--once')

    @classmethod
    def seed_failing(cls, source, error):
        """No loader here can make a source fail with exactly this text: the gate is written
        as loader_close_failed leaves it, and its error episode where the console reads it."""
        cls.cluster.psql(f"""
            UPDATE tributary.gates g
               SET state = 'failing', failures = 3, last_error = {quote(error)},
                   last_error_at = now(), last_request = now(), next_allowed_at = now() + interval '1 hour'
              FROM tributary.sources s
             WHERE s.id = g.source_id AND s.name = {quote(source)};
            DO $seed$
            BEGIN
                IF to_regclass('tributary.source_errors') IS NOT NULL THEN
                    INSERT INTO tributary.source_errors (source_id, first_at, last_at, count, error)
                    SELECT id, now() - interval '10 minutes', now(), 3, {quote(error)}
                      FROM tributary.sources WHERE name = {quote(source)};
                END IF;
            END $seed$;""")

    @classmethod
    def seed_history(cls, source):
        """An hour of per-minute counts for the charts, as the maintainer's fold leaves them
        (the events themselves would all be loaded in this minute). The current minute is
        left out: the chart's window moves with the clock."""
        cls.cluster.psql(f"""
            WITH minutes AS (
                SELECT m, (50 + 40 * sin(extract(epoch FROM m) / 600))::bigint AS n
                  FROM generate_series(date_trunc('minute', now()) - interval '59 minutes',
                                       date_trunc('minute', now()) - interval '1 minute', interval '1 minute') m),
            per_source AS (
                INSERT INTO tributary.source_minutes (source_id, minute, events)
                SELECT s.id, m, n FROM minutes, tributary.sources s WHERE s.name = {quote(source)})
            INSERT INTO tributary.log_minutes (minute, events) SELECT m, n FROM minutes;""")

    @classmethod
    def fail_everything(cls, group, error):
        """Reads the group's events and fails them: with max deliveries 1 they become dead letters."""
        def dead_letters():
            cls.cluster.psql(f"""
                SELECT tributary.consumer_fail(batch_id, lease_token, {quote(error)})
                  FROM (SELECT DISTINCT batch_id, lease_token
                          FROM tributary.consumer_read({quote(group)}, 'browser-seed', 100)) b;""")
            return int(cls.cluster.psql(f'SELECT count(*) FROM tributary.dead_letters WHERE group_name = {quote(group)};')) >= 2
        wait_for(dead_letters, f'two dead letters in {group}')

    # ---- helpers ------------------------------------------------------------------------------

    def open(self, route, token=None, base=None):
        """Opens a route of the page afresh, with the token in sessionStorage or none."""
        d = self.driver
        d.get((base or self.console.base) + route)
        if token:
            d.execute_script('sessionStorage.setItem(arguments[0], arguments[1]);', TOKEN_KEY, token)
        else:
            d.execute_script('sessionStorage.clear();')
        d.refresh()
        self.wait_shown('#main')

    def wait(self, condition, what):
        # The overview, sources and groups pages redraw every 5 s: an element found a moment
        # ago may be gone, so conditions find theirs afresh and a stale one means "not yet".
        return WebDriverWait(self.driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: condition(d), 'timed out waiting for ' + what)

    def wait_shown(self, css):
        return self.wait(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None),
                         css + ' to show')

    def tearDown(self):
        # Anything the Content-Security-Policy refused (an inline style or script, an image
        # from elsewhere) shows in the browser's console: the page must not need any.
        refused = [e['message'] for e in self.driver.get_log('browser') if 'Content Security Policy' in e['message']]
        self.assertEqual(refused, [], 'the page broke its Content-Security-Policy')

    def cell(self, row_css, attribute, value, cell_css):
        """The text of cell_css in the row whose attribute is value, found afresh; None if absent."""
        rows = self.rows_with(row_css, attribute, value)
        return rows[0].find_element(By.CSS_SELECTOR, cell_css).text if rows else None

    def rows_with(self, css, attribute, value):
        return [e for e in self.driver.find_elements(By.CSS_SELECTOR, css) if e.get_attribute(attribute) == value]

    def wait_row(self, css, attribute, value):
        return self.wait(lambda d: next(iter(self.rows_with(css, attribute, value)), None), f'{css}[{attribute}={value}]')

    def shot(self, name):
        if self.screenshots:
            self.driver.save_screenshot(os.path.join(self.screenshots, name + '.png'))

    def assert_no_html_from_data(self):
        d = self.driver
        self.assertEqual(d.find_elements(By.TAG_NAME, 'img'), [], 'an <img> element was made from data')
        self.assertEqual(d.find_elements(By.TAG_NAME, 'b'), [], 'a <b> element was made from a payload')
        with self.assertRaises(NoAlertPresentException):
            d.switch_to.alert.text

    def bars(self, chart_test):
        """How many of a chart's minutes have events (bars with a height)."""
        return sum(1 for bar in self.driver.find_elements(By.CSS_SELECTOR, f'[data-test={chart_test}] rect.bar')
                   if float(bar.get_attribute('height')) > 0)

    def banner(self):
        e = self.driver.find_element(By.ID, 'error-banner')
        return e.text if e.is_displayed() else ''

    def enabled(self, source):
        return self.cluster.psql(f'SELECT enabled FROM tributary.sources WHERE name = {quote(source)};')

    def fetch_from_page(self, path, headers):
        """A POST made by the page's own JavaScript (same origin), returning its status."""
        return self.driver.execute_async_script("""
            const [path, headers, done] = arguments;
            fetch(path, {method: 'POST', headers: headers, body: '{}'})
              .then(r => done(r.status), e => done('failed: ' + e.message));""", path, headers)

    # ---- the pages ----------------------------------------------------------------------------

    def test_overview_shows_sources_groups_and_what_needs_attention(self):
        self.open('#/')
        self.wait_shown('[data-test=overview-rate]')
        # 59 seeded minutes; the window may have moved by one since.
        self.wait(lambda d: self.bars('overview-rate') >= 58, 'the seeded hour in the rate chart')
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, '[data-test=overview-rate] rect.bar')), 60)
        self.wait(lambda d: self.cell('[data-test=overview-states] tr', 'data-state', 'failing', 'td.num') == '1',
                  'one failing source counted')
        self.wait(lambda d: self.cell('[data-test=overview-states] tr', 'data-state', 'published', 'td.num') == '1',
                  'one published source counted')
        self.wait(lambda d: 'Sources: 5' in d.find_element(By.ID, 'overview').text, 'five sources in all')
        self.wait(lambda d: 'of 4' in d.find_element(By.ID, 'overview').text, 'four groups in all')
        self.wait(lambda d: 'broken.api' in (self.cell('[data-test=overview-attention] tr', 'data-kind', 'failing_source', 'td:nth-child(2)') or ''),
                  'broken.api among what needs attention')
        self.assert_no_html_from_data()
        self.assertEqual(self.banner(), '')
        self.shot('console-overview')

    def test_sources_table_filters_sorts_and_pages(self):
        self.open('#/sources')
        for name in ('orders.eu', 'orders.us', 'broken.api', 'hooks.github', 'app.live'):
            self.wait_row('[data-test=sources-table] tbody tr', 'data-source', name)
        summary = self.driver.find_element(By.CSS_SELECTOR, '[data-test=sources-summary]')
        self.assertIn('5 of 5', summary.text)
        self.wait(lambda d: self.cell('[data-test=sources-table] tbody tr', 'data-source', 'broken.api', '[data-test=last-error]') == HOSTILE,
                  'the hostile error as text in broken.api\'s row')
        self.shot('console-sources')

        pattern = self.driver.find_element(By.ID, 'sources-pattern')
        pattern.clear()
        pattern.send_keys('orders.>\n')
        self.wait(lambda d: '2 of 5' in summary.text, 'the pattern orders.> to match 2')
        self.wait(lambda d: {e.get_attribute('data-source') for e in d.find_elements(By.CSS_SELECTOR, '[data-test=sources-table] tbody tr')}
                  == {'orders.eu', 'orders.us'}, 'only the orders rows')

        pattern.clear()
        pattern.send_keys('>\n')
        self.wait(lambda d: '5 of 5' in d.find_element(By.CSS_SELECTOR, '[data-test=sources-summary]').text, 'every source again')
        self.driver.find_element(By.CSS_SELECTOR, '#sources-state option[value=failing]').click()
        self.wait(lambda d: [e.get_attribute('data-source') for e in d.find_elements(By.CSS_SELECTOR, '[data-test=sources-table] tbody tr')]
                  == ['broken.api'], 'the state filter to leave broken.api')
        self.driver.find_element(By.CSS_SELECTOR, '#sources-state option[value=""]').click()

        self.driver.find_element(By.CSS_SELECTOR, '[data-test=sort-name]').click()   # name, now descending
        self.wait(lambda d: [e.get_attribute('data-source') for e in d.find_elements(By.CSS_SELECTOR, '[data-test=sources-table] tbody tr')]
                  == ['orders.us', 'orders.eu', 'hooks.github', 'broken.api', 'app.live'], 'names in descending order')
        self.assertIn('order=desc', self.driver.current_url)
        self.assertEqual(self.banner(), '')

    def test_source_page_shows_hostile_error_as_text(self):
        self.open('#/sources/broken.api')
        self.wait_shown('[data-test=source][data-name="broken.api"]')
        # The newest error: in the state block's facts and, once the store records episodes, the errors table.
        self.wait(lambda d: HOSTILE in d.find_element(By.CSS_SELECTOR, '[data-test=source]').text, 'the error text')
        errors = self.driver.find_elements(By.CSS_SELECTOR, '[data-test=source-errors] [data-test=error-text]')
        self.assertTrue(errors, 'the recent errors table lists the episode')
        self.assertEqual(errors[0].text, HOSTILE)
        self.assertTrue(errors[0].is_displayed())
        self.assert_no_html_from_data()
        self.shot('console-source')

    def test_source_config_shows_no_secret(self):
        self.open('#/sources/orders.eu')
        config = self.wait_shown('[data-test=source-config]')
        self.assertIn('http://127.0.0.1:9/events', config.text)
        self.assertIn('<redacted>', config.text)
        self.assertGreaterEqual(self.bars('source-rate'), 58, 'the seeded hour in the source\'s chart')
        self.assertNotIn('not-shown-anywhere', self.driver.page_source)
        self.open('#/sources/orders.us')
        self.wait_shown('[data-test=source-config]')
        self.assertNotIn('hidden-query', self.driver.page_source)

    def test_pausing_from_the_page_pauses_the_source(self):
        self.open('#/sources/orders.eu', token=TOKEN)
        self.assertEqual(self.enabled('orders.eu'), 't')
        pause = self.wait(lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, '[data-test=pause]') if b.is_enabled()), None),
                          'the pause button to be enabled')
        pause.click()
        self.wait_shown('[data-test=resume]')
        self.assertEqual(self.enabled('orders.eu'), 'f')
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, '#source [data-test=action-status]').text, 'paused')
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '[data-test=resume]').is_enabled(), 'resume enabled')
        self.driver.find_element(By.CSS_SELECTOR, '[data-test=resume]').click()
        self.wait_shown('[data-test=pause]')
        self.assertEqual(self.enabled('orders.eu'), 't')
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '[data-test=nudge]').is_enabled(), 'nudge enabled')
        self.driver.find_element(By.CSS_SELECTOR, '[data-test=nudge]').click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '#source [data-test=action-status]').text.startswith('nudged'),
                  'the page to say nudged')
        self.assertEqual(self.banner(), '')

    def test_groups_and_group_page_show_dead_letters(self):
        self.open('#/groups')
        self.wait(lambda d: self.cell('[data-test=groups-table] tbody tr', 'data-group', 'billing', '[data-test=dead-letters]') == '2',
                  'billing with its two dead letters')
        self.open('#/groups/billing')
        self.wait_shown('[data-test=group][data-name=billing]')
        letters = self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-test=dead-letter]'), 'the dead letters')
        self.assertEqual(len(letters), 2)
        self.assertEqual(letters[0].find_element(By.CSS_SELECTOR, '[data-test=dead-letter-error]').text, HOSTILE)
        self.assertIn('"html": "<b>bold?</b>"', letters[0].find_element(By.CSS_SELECTOR, '[data-test=payload]').text)
        self.assert_no_html_from_data()
        self.shot('console-group')

    def test_groups_and_group_page_show_lanes_and_warn_of_a_lane_nobody_holds(self):
        self.open('#/groups')
        self.wait(lambda d: self.cell('[data-test=groups-table] tbody tr', 'data-group', 'sharded', '[data-test=lanes]') == '4 (1 unheld)',
                  'sharded with its 4 lanes, one unheld')
        self.assertEqual(self.cell('[data-test=groups-table] tbody tr', 'data-group', 'billing', '[data-test=lanes]'), '1')
        self.open('#/groups/sharded')
        self.wait_shown('[data-test=group][data-name=sharded]')
        lanes = self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-test=lane]'), 'the lanes')
        self.assertEqual([lane.get_attribute('data-lane') for lane in lanes], ['0', '1', '2', '3'])
        holders = [lane.find_element(By.CSS_SELECTOR, '[data-test=lane-holder]').text for lane in lanes]
        self.assertEqual(holders, [HOSTILE] * 3 + ['nobody: its events wait'])
        self.assertIn('bad', lanes[3].find_element(By.CSS_SELECTOR, '[data-test=lane-holder]').get_attribute('class'))
        self.assert_no_html_from_data()
        self.assertEqual(self.banner(), '')
        self.shot('console-group-lanes')

    def test_replaying_a_dead_letter_from_the_page_brings_it_back(self):
        seqs = self.cluster.psql("SELECT seq FROM tributary.dead_letters WHERE group_name = 'replays' ORDER BY seq;").split()
        self.assertEqual(len(seqs), 2)
        self.open('#/groups/replays', token=TOKEN)
        row = self.wait_row('[data-test=dead-letter]', 'data-seq', seqs[0])
        button = row.find_element(By.CSS_SELECTOR, '[data-test=replay]')
        self.wait(lambda d: button.is_enabled(), 'the replay button to be enabled')
        button.click()
        self.wait(lambda d: [e.get_attribute('data-seq') for e in d.find_elements(By.CSS_SELECTOR, '[data-test=dead-letter]')] == [seqs[1]],
                  'only the other dead letter left on the page')
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, '#group [data-test=action-status]').text, 'replayed 1')
        self.assertEqual(self.cluster.psql("SELECT seq FROM tributary.dead_letters WHERE group_name = 'replays';"), seqs[1])
        # The replayed event is the group's again: a consumer reads it as a retry.
        read = self.cluster.psql("SELECT seq FROM tributary.consumer_read('replays', 'browser-check', 10);")
        self.assertIn(seqs[0], read.split())
        self.assertEqual(self.banner(), '')

    def test_reset_asks_for_the_group_name(self):
        self.open('#/groups/billing', token=TOKEN)
        reset = self.wait_shown('[data-test=reset]')
        self.wait(lambda d: reset.is_enabled(), 'reset enabled')
        reset.click()
        dialog = self.wait_shown('dialog[open]')
        ok = dialog.find_element(By.CSS_SELECTOR, '[data-test=dialog-ok]')
        self.assertFalse(ok.is_enabled())
        dialog.find_element(By.CSS_SELECTOR, '[data-test=reset-time]').send_keys('2000-01-01T00:00:00Z')
        dialog.find_element(By.CSS_SELECTOR, '[data-test=reset-confirm]').send_keys('billin')
        self.assertFalse(ok.is_enabled())
        dialog.find_element(By.CSS_SELECTOR, '[data-test=dialog-cancel]').click()
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, 'dialog[open]'), 'the dialog to close')
        self.assertEqual(self.cluster.psql("SELECT count(*) FROM tributary.dead_letters WHERE group_name = 'billing';"), '2')

    def test_resetting_a_group_from_the_page(self):
        first = self.cluster.psql("SELECT min(seq) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id "
                                  "WHERE s.name = 'app.live';")
        self.open('#/groups/resets', token=TOKEN)
        reset = self.wait_shown('[data-test=reset]')
        self.wait(lambda d: reset.is_enabled(), 'reset enabled')
        reset.click()
        dialog = self.wait_shown('dialog[open]')
        dialog.find_element(By.CSS_SELECTOR, '[data-test=reset-to] option[value=beginning]').click()
        dialog.find_element(By.CSS_SELECTOR, '[data-test=reset-confirm]').send_keys('resets')
        ok = dialog.find_element(By.CSS_SELECTOR, '[data-test=dialog-ok]')
        self.wait(lambda d: ok.is_enabled(), 'OK enabled by the typed name')
        ok.click()
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, 'dialog[open]'), 'the dialog to close')
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '#group [data-test=action-status]').text == 'reset', 'the page to say reset')
        self.assertEqual(self.banner(), '')
        # The group now reads the log from its beginning: the first event published, long before it was made.
        read = self.cluster.psql("SELECT seq FROM tributary.consumer_read('resets', 'browser-check', 100);")
        self.assertIn(first, read.split())

    # ---- refusals -----------------------------------------------------------------------------

    def test_actions_without_the_token_are_refused(self):
        self.open('#/sources/orders.eu')
        pause = self.wait_shown('[data-test=pause]')
        self.assertFalse(pause.is_enabled())
        reason = self.wait_shown('[data-test=action-reason]')
        self.assertIn('token', reason.text)
        # The page's own JavaScript, same origin, without the header: 401; with it: allowed.
        status = self.fetch_from_page('/api/sources/orders.eu/pause', {'Content-Type': 'application/json'})
        self.assertEqual(status, 401)
        self.assertEqual(self.enabled('orders.eu'), 't')
        wrong = self.fetch_from_page('/api/sources/orders.eu/pause',
                                     {'Content-Type': 'application/json', 'Authorization': 'Bearer wrong-' + TOKEN})
        self.assertEqual(wrong, 401)
        self.assertEqual(self.enabled('orders.eu'), 't')
        # A wrong token typed in the box is refused and not kept.
        box = self.driver.find_element(By.ID, 'token-input')
        box.send_keys('wrong-token\n')
        self.wait(lambda d: 'refused' in d.find_element(By.ID, 'token-status').text, 'the token to be refused')
        self.assertIsNone(self.driver.execute_script('return sessionStorage.getItem(arguments[0]);', TOKEN_KEY))
        self.assertFalse(self.driver.find_element(By.CSS_SELECTOR, '[data-test=pause]').is_enabled())
        # The right one is kept and enables the actions.
        box.clear()
        box.send_keys(TOKEN + '\n')
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '[data-test=pause]').is_enabled(), 'pause enabled by the token')
        self.assertEqual(self.driver.execute_script('return sessionStorage.getItem(arguments[0]);', TOKEN_KEY), TOKEN)

    def test_read_only_console_disables_actions(self):
        self.open('#/sources/orders.eu', base=self.read_only.base)
        pause = self.wait_shown('[data-test=pause]')
        self.assertFalse(pause.is_enabled())
        self.wait(lambda d: 'read-only' in d.find_element(By.CSS_SELECTOR, '[data-test=action-reason]').text, 'the read-only reason')
        self.assertFalse(self.driver.find_element(By.ID, 'token-input').is_enabled())
        status = self.fetch_from_page('/api/sources/orders.eu/pause',
                                      {'Content-Type': 'application/json', 'Authorization': 'Bearer ' + TOKEN})
        self.assertEqual(status, 403)
        self.assertEqual(self.enabled('orders.eu'), 't')

    # ---- the live tail ------------------------------------------------------------------------

    def test_live_tail_shows_an_event_published_now(self):
        self.open('#/tail')
        pattern = self.wait_shown('#tail-pattern')
        pattern.clear()
        pattern.send_keys('app.>')
        self.driver.find_element(By.CSS_SELECTOR, '[data-test=tail-start]').click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '[data-test=tail-status]').text.startswith('streaming'),
                  'the stream to open')
        marker = uuid.uuid4().hex
        self.cluster.psql(f"SELECT tributary.publish('app.live', {quote('tail-' + marker)}, "
                          f"{quote(json.dumps({'marker': marker, 'note': HOSTILE}))}::jsonb);")
        line = self.wait(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, '[data-test=tail-line]')
                                         if marker in e.text), None), 'the published event in the tail')
        self.assertEqual(line.get_attribute('data-source'), 'app.live')
        self.assertIn(HOSTILE, line.text)
        self.assert_no_html_from_data()
        self.shot('console-tail')
        self.driver.find_element(By.CSS_SELECTOR, '[data-test=tail-stop]').click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, '[data-test=tail-status]').text == 'stopped', 'the tail to stop')


if __name__ == '__main__':
    unittest.main(verbosity=2)
