#!/usr/bin/env python3
"""Full-page screenshots of the built book and of its notebooks, for looking at; and a check
of the pages' text as the browser shows it (``--check-text``).

    python scripts/screenshots.py [--html _build/html] [--out _build/screenshots]
                                  [--pages PATTERN ...] [--notebooks book/*.ipynb] [--no-notebooks]
    python scripts/screenshots.py --check-text     # no screenshots: the text check below, exit 1
    python scripts/screenshots.py --first-screen --pages 'book/0*'   # each page's first window
    python scripts/screenshots.py --open-dropdowns --pages 'book/00*' # folded blocks unfolded

1. Serves the built book (``bash scripts/book.sh`` first) on localhost and opens every page
   in headless Chromium; waits until MathJax has typeset the page, then writes
   ``OUT/<page>.png`` (the whole page, 1280 px wide) and ``OUT/tiles/<page>-NN.png`` (the same
   page cut into screen-sized pieces, easier to read than one very tall image).
2. Renders each notebook with ``jupyter nbconvert --to html`` (as a notebook viewer shows the
   committed notebook: no outputs, Markdown as Jupyter renders it, MathJax with ``$`` math and
   none of the book's macros, as in Colab or on GitHub) and screenshots it the same way, as
   ``OUT/nb-<name>.png`` and its tiles.
3. With ``--check-text`` (run by ``scripts/test.sh`` where Chromium is installed): opens every
   book page, waits for MathJax, and fails on any TeX delimiter left untypeset, literal MyST
   fence or unresolved glue role in the text outside code (``RAW_TEXT_JS``).

Needs Chromium (``apt-get install -y chromium``, or set ``CHROMIUM=/path/to/chrome``) and
nbconvert (``pip install nbconvert``, or ``NBCONVERT="/path/to/jupyter-nbconvert"``). Talks to
Chromium over the DevTools protocol with tornado (installed with Jupyter). Nothing leaves
localhost: Chromium runs with a fresh profile and background networking disabled.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import fnmatch
import functools
import http.server
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, TILE = 1280, 1400
SKIP_PAGES = {"genindex.html", "search.html", "py-modindex.html"}
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
    "--disable-extensions", "--disable-default-apps", "--mute-audio",
    "--remote-allow-origins=*", "--remote-debugging-port=0",
]
# Notebook viewers (Jupyter, Colab, GitHub) typeset $...$ and $$...$$ and know no book macros.
NB_MATHJAX_CONFIG = {
    "tex": {"inlineMath": [["$", "$"], ["\\(", "\\)"]],
            "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
            "processEscapes": True, "processEnvironments": True},
}
WAIT_JS = """(async () => {
  const deadline = Date.now() + 30000;
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) &&
         document.querySelector('script[src*="mathjax"]') && Date.now() < deadline)
    await new Promise(r => setTimeout(r, 100));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  if (document.fonts) await document.fonts.ready;
  await Promise.all(Array.from(document.images).filter(i => !i.complete)
    .map(i => new Promise(r => { i.onload = i.onerror = r; })));
  await new Promise(r => setTimeout(r, 300));
  window.scrollTo(0, 0);
  const d = document.documentElement, b = document.body;
  return [Math.max(d.scrollHeight, b.scrollHeight), Math.max(d.scrollWidth, b.scrollWidth)];
})()"""

# Display formulas wider than their box (they scroll sideways in the book): their TeX.
WIDE_MATH_JS = """(() => {
  if (!(window.MathJax && MathJax.startup && MathJax.startup.document)) return [];
  const out = [];
  for (const m of MathJax.startup.document.math) {
    const r = m.typesetRoot;
    if (!m.display || !r) continue;
    const box = r.closest('div.math') || r.parentElement;
    const over = [r, box].find(e => e && e.scrollWidth > e.clientWidth + 2);
    if (over)
      out.push(Math.round(over.scrollWidth) + '/' + Math.round(over.clientWidth) + ' px: ' +
               m.math.replace(/\\s+/g, ' ').trim().slice(0, 90));
  }
  return out;
})()"""


# Unfold every folded block (sphinx-togglebutton's dropdown admonitions, <details>) and
# return the new page height: --open-dropdowns, to look at the derivations and solutions.
OPEN_JS = """(async () => {
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('button.toggle-button').forEach(b => b.classList.remove('toggle-button-hidden'));
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => setTimeout(r, 300));
  const d = document.documentElement, b = document.body;
  return Math.max(d.scrollHeight, b.scrollHeight);
})()"""


# ----------------------------------------------------------------------------- helpers
def find_chromium() -> str:
    for cand in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome",
                 "google-chrome-stable"):
        if cand and shutil.which(cand):
            return shutil.which(cand)
    sys.exit("screenshots: Chromium not found. Install it (as root: apt-get install -y "
             "chromium) or set CHROMIUM=/path/to/chrome.")


def nbconvert_cmd() -> list[str]:
    if os.environ.get("NBCONVERT"):
        return shlex.split(os.environ["NBCONVERT"])
    for cand in ("jupyter-nbconvert",):
        if shutil.which(cand):
            return [shutil.which(cand)]
    try:
        import nbconvert  # noqa: F401
        return [sys.executable, "-m", "nbconvert"]
    except ImportError:
        sys.exit("screenshots: nbconvert not found. `pip install nbconvert`, set "
                 "NBCONVERT=/path/to/jupyter-nbconvert, or pass --no-notebooks.")


def slug(rel: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", rel.removesuffix(".html").replace("/", "__"))


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the book at / and the rendered notebooks at /_nbview/."""

    def __init__(self, *a, html_dir: str, nb_dir: str, **kw):
        self.nb_dir = nb_dir
        super().__init__(*a, directory=html_dir, **kw)

    def translate_path(self, path):
        if path.startswith("/_nbview/"):
            rel = path[len("/_nbview/"):].split("?", 1)[0].split("#", 1)[0]
            return os.path.join(self.nb_dir, *rel.split("/"))
        return super().translate_path(path)

    def log_message(self, *args):
        pass


def serve(html_dir: Path, nb_dir: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Handler, html_dir=str(html_dir), nb_dir=str(nb_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def render_notebooks(notebooks: list[Path], nb_dir: Path) -> list[Path]:
    """nbconvert each notebook to HTML, with MathJax served locally (no CDN)."""
    cmd = nbconvert_cmd()
    out = []
    cfg = f"<script>window.MathJax = {json.dumps(NB_MATHJAX_CONFIG)};</script>\n"
    for nb in notebooks:
        subprocess.run([*cmd, "--to", "html", "--output-dir", str(nb_dir),
                        "--HTMLExporter.mathjax_url=/_static/mathjax/tex-mml-chtml.js",
                        "--log-level=WARN", str(nb)], check=True)
        html = nb_dir / (nb.stem + ".html")
        text = html.read_text(encoding="utf8")
        text = text.replace('<script src="/_static/mathjax/', cfg + '<script src="/_static/mathjax/', 1)
        html.write_text(text, encoding="utf8")
        out.append(html)
    return out


# ----------------------------------------------------------------------------- DevTools
class Browser:
    """Minimal Chrome DevTools Protocol client (tornado websocket, one flat session)."""

    def __init__(self, ws):
        self.ws, self.n, self.pending, self.events = ws, 0, {}, []
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def launch(cls, chromium: str, profile: str):
        from tornado.websocket import websocket_connect

        proc = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                 f"--window-size={WIDTH},900", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = None
        for line in proc.stderr:
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
                break
        if url is None:
            proc.kill()
            raise RuntimeError("Chromium did not start (no DevTools URL)")
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
        ws = await websocket_connect(url, max_message_size=1 << 30)
        self = cls(ws)
        self.proc = proc
        return self

    async def _read(self):
        while True:
            msg = await self.ws.read_message()
            if msg is None:
                break
            data = json.loads(msg)
            fut = self.pending.pop(data.get("id"), None)
            if fut is not None:
                if "error" in data:
                    fut.set_exception(RuntimeError(str(data["error"])))
                else:
                    fut.set_result(data.get("result", {}))
            else:
                self.events.append(data)

    async def send(self, method, params=None, session=None, timeout=60):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.n] = fut
        await self.ws.write_message(json.dumps(msg))
        return await asyncio.wait_for(fut, timeout)

    async def wait_event(self, method, session, timeout=60):
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method and ev.get("sessionId") == session:
                    del self.events[i]
                    return ev
            await asyncio.sleep(0.05)
        raise TimeoutError(method)

    async def close(self):
        try:
            await self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - the browser may already be gone
            pass
        self.proc.wait(timeout=10)


@contextlib.asynccontextmanager
async def opened(browser: Browser, url: str):
    """A new tab, WIDTH px wide, showing ``url`` loaded and typeset by MathJax; yields its
    session and the page's (height, width); the tab is closed afterwards."""
    target = (await browser.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
    session = (await browser.send("Target.attachToTarget",
                                  {"targetId": target, "flatten": True}))["sessionId"]
    try:
        await browser.send("Page.enable", session=session)
        await browser.send("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": 900, "deviceScaleFactor": 1,
                            "mobile": False}, session=session)
        await browser.send("Page.navigate", {"url": url}, session=session)
        await browser.wait_event("Page.loadEventFired", session)
        res = await browser.send("Runtime.evaluate", {"expression": WAIT_JS, "awaitPromise": True,
                                                      "returnByValue": True}, session=session)
        yield session, res.get("result", {}).get("value") or (900, WIDTH)
    finally:
        await browser.send("Target.closeTarget", {"targetId": target})


async def shoot(browser: Browser, url: str, out_full: Path, tiles_dir: Path, name: str,
                first_screen: bool = False, open_folds: bool = False):
    async with opened(browser, url) as (session, (height, width)):
        if open_folds:
            res = await browser.send("Runtime.evaluate", {"expression": OPEN_JS,
                                                          "awaitPromise": True,
                                                          "returnByValue": True},
                                     session=session)
            height = res.get("result", {}).get("value") or height
        if first_screen:   # what a reader sees on opening the page: one 1280x900 window
            shot = await browser.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": False,
                "clip": {"x": 0, "y": 0, "width": WIDTH, "height": 900, "scale": 1}},
                session=session, timeout=120)
            out_full.write_bytes(base64.b64decode(shot["data"]))
            return WIDTH, 900, 1
        wide = await browser.send("Runtime.evaluate", {"expression": WIDE_MATH_JS,
                                                       "returnByValue": True}, session=session)
        for tex in wide.get("result", {}).get("value") or []:
            print(f"  {name}: wide display formula {tex}")
        if width > WIDTH:  # something is wider than the window: capture it, and say so
            print(f"  {name}: page is {width} px wide at a {WIDTH} px window "
                  "(horizontal overflow)")
        width, height = max(WIDTH, int(width)), int(height)
        # Make the window as tall as the page and cut it into clips. (Capturing "beyond the
        # viewport" instead shifts some pages sideways: wide stretchy MathJax glyphs.)
        await browser.send("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": False}, session=session)
        await asyncio.sleep(0.5)
        from PIL import Image

        pieces = []
        for k, y in enumerate(range(0, height, TILE)):
            h = min(TILE, height - y)
            shot = await browser.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": False,
                "clip": {"x": 0, "y": y, "width": width, "height": h, "scale": 1}},
                session=session, timeout=120)
            data = base64.b64decode(shot["data"])
            (tiles_dir / f"{name}-{k + 1:02d}.png").write_bytes(data)
            pieces.append(Image.open(io.BytesIO(data)).convert("RGB"))
        full = Image.new("RGB", (width, sum(p.height for p in pieces)), "white")
        y = 0
        for p in pieces:
            full.paste(p, (0, y))
            y += p.height
        full.save(out_full, optimize=True)
        return width, height, len(pieces)


# Text a reader sees raw once MathJax has run: TeX delimiters left untypeset, literal MyST
# fences and unresolved glue roles, in every text node outside code, scripts and typeset math
# (the patterns of scripts/mathcheck/raw_text.json, which check_math.js applies to the HTML;
# this checks the page as the browser shows it).
RAW_TEXT_JS = r"""
(() => {
  const skip = new Set(['SCRIPT', 'NOSCRIPT', 'STYLE', 'TEXTAREA', 'PRE', 'CODE', 'KBD', 'SAMP',
                        'MJX-CONTAINER', 'MJX-ASSISTIVE-MML', 'MATH']);
  const raw = __RAW__.map((r) => [new RegExp(r.pattern), r.what]);
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode(n) {
      for (let e = n.parentElement; e; e = e.parentElement) {
        if (skip.has(e.tagName)) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    }});
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    for (const [re, error] of raw) {
      const m = n.data.match(re);
      if (m) found.push(error + ': ...' + n.data.slice(Math.max(0, m.index - 40), m.index + 60)
                        .replace(/\s+/g, ' ') + '...');
    }
  }
  return found;
})()
""".replace("__RAW__", (ROOT / "scripts" / "mathcheck" / "raw_text.json").read_text())


async def raw_text(browser: Browser, url: str) -> list[str]:
    """What RAW_TEXT_JS finds on ``url`` once the page has loaded and MathJax has run."""
    async with opened(browser, url) as (session, _):
        res = await browser.send("Runtime.evaluate", {"expression": RAW_TEXT_JS,
                                                      "returnByValue": True}, session=session)
        return res.get("result", {}).get("value") or []


def book_pages(html_dir: Path, patterns: list[str] | None) -> list[str]:
    pages = []
    for p in sorted(html_dir.rglob("*.html")):
        rel = p.relative_to(html_dir).as_posix()
        if rel.split("/")[0] in {"_static", "_sources", "_images"} or p.name in SKIP_PAGES:
            continue
        if rel.startswith("_modules/") and rel not in ("_modules/index.html",
                                                        "_modules/dltheory/plotting.html"):
            continue   # the source pages of the API's [source] links: one is enough to look at
        text = p.read_text(encoding="utf8", errors="replace")[:2000]
        if 'http-equiv="Refresh"' in text or 'http-equiv="refresh"' in text:
            continue  # the root index.html only redirects
        if patterns and not any(fnmatch.fnmatch(rel, pat) for pat in patterns):
            continue
        pages.append(rel)
    return pages


async def main_async(args) -> int:
    html_dir = Path(args.html).resolve()
    out = Path(args.out).resolve()
    if not (html_dir / "_static").is_dir():
        sys.exit(f"screenshots: no built book at {html_dir} (run `bash scripts/book.sh` first)")
    chromium = find_chromium()
    tiles = out / "tiles"
    tiles.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="dltheory-shots-"))
    nb_dir = work / "nbview"
    nb_dir.mkdir()
    notebooks = [] if args.no_notebooks or args.check_text else [Path(p) for p in args.notebooks]
    nb_pages = render_notebooks(notebooks, nb_dir) if notebooks else []
    server, base = serve(html_dir, nb_dir)
    browser = await Browser.launch(chromium, str(work / "profile"))
    try:
        if args.check_text:   # every book page in the browser; no screenshots
            bad = 0
            pages = book_pages(html_dir, args.pages)
            for rel in pages:
                for line in await raw_text(browser, f"{base}/{rel}"):
                    bad += 1
                    print(f"RAW TEXT {rel}: {line}")
            print(f"check-text: {len(pages)} pages in Chromium after MathJax, {bad} raw "
                  "delimiter(s), fence(s) or glue role(s)")
            return 1 if bad else 0
        jobs = [(f"{base}/{rel}", slug(rel)) for rel in book_pages(html_dir, args.pages)]
        jobs += [(f"{base}/_nbview/{p.name}", "nb-" + p.stem) for p in nb_pages]
        suffix = ("-first" if args.first_screen else "") + ("-open" if args.open_dropdowns else "")
        for url, name in jobs:
            width, height, n = await shoot(browser, url, out / f"{name}{suffix}.png", tiles,
                                           name + suffix, args.first_screen,
                                           args.open_dropdowns)
            print(f"{name}{suffix}.png  {width}x{height}  ({n} tiles)")
    finally:
        await browser.close()
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {out}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", default=str(ROOT / "_build" / "html"), help="built book")
    ap.add_argument("--out", default=str(ROOT / "_build" / "screenshots"))
    ap.add_argument("--pages", nargs="*", help="only pages matching these globs (e.g. 'book/0*')")
    ap.add_argument("--notebooks", nargs="*",
                    default=sorted(str(p) for p in (ROOT / "book").glob("*.ipynb")))
    ap.add_argument("--no-notebooks", action="store_true")
    ap.add_argument("--first-screen", action="store_true",
                    help="only the first 1280x900 window of each page (OUT/<page>-first.png): "
                         "what a reader sees on opening it")
    ap.add_argument("--open-dropdowns", action="store_true",
                    help="unfold every folded block (dropdowns, <details>) before the shot")
    ap.add_argument("--check-text", action="store_true",
                    help="no screenshots: open every book page and exit 1 on any TeX delimiter "
                         "MathJax left untypeset, literal MyST fence or unresolved glue role")
    args = ap.parse_args(argv)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
