"""One marked block of BENCHMARKS.md, rewritten by the report that owns it."""
from pathlib import Path


def write_block(page: Path, begin: str, end: str, md: str) -> None:
    """Puts `md` between the markers `begin` and `end` of `page`, replacing what was there, or
    appends the marked block when the page has no such markers yet."""
    text = page.read_text() if page.exists() else ""
    block = f"{begin}\n{md}{end}\n"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    page.write_text(text)
