#!/usr/bin/python3
"""Writes symbols.ttf: the few symbols the web app shows that Noto Sans (Fyne's
text font) has not, cut from DejaVu Sans and fitted to Noto Sans's metrics.

The desktop app finds them in the system's fonts and Fyne's colour emoji font;
the web build has neither (it is built with -tags no_emoji: the emoji font is
4.2 MB of the wasm). app/web's theme puts this font first in every text face,
so these glyphs come from it and all others from Noto Sans. It has a space
(the shaper keeps a space after a symbol in the symbol's run, and takes the
first face's space for the line's metrics), so its units per em, ascent,
descent, line gap and space advance are Noto Sans's: text measures as before.

    /usr/bin/python3 app/web/fonts/symbols.py   # Debian: python3-fonttools, fonts-dejavu-core; go

TestWebFontsCoverTheUI (app/web) fails when the UI uses a character that
neither font has: add it to RUNES and run this again.
"""
import os
import subprocess
import sys

from fontTools import subset
from fontTools.ttLib import TTFont
from fontTools.ttLib.scaleUpem import scale_upem

SOURCE = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# What the review shows (⚠ risk badges, − line counts, → renames and
# "a.json → b.json"), and a few of their kin.
RUNES = "⚠−→←↑↓≤≥✓✗"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "symbols.ttf")


def noto():
    """Fyne's Noto Sans Regular, from the module the project builds with."""
    d = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", "fyne.io/fyne/v2"], cwd=HERE, check=True,
                       capture_output=True, text=True).stdout.strip()
    return TTFont(os.path.join(d, "theme", "font", "NotoSans-Regular.ttf"))


def main():
    if not os.path.exists(SOURCE):
        sys.exit("symbols.py: %s is missing (apt-get install fonts-dejavu-core)" % SOURCE)
    font = TTFont(SOURCE, recalcTimestamp=False)  # the same bytes on every run
    opts = subset.Options()
    opts.layout_features = []
    opts.hinting = False
    opts.name_IDs = [0, 14]  # copyright, licence URL (the licence is LICENSE-DejaVu.txt); the rest is renamed below
    opts.drop_tables += ["MATH", "GDEF", "GPOS", "GSUB", "gasp", "FFTM"]
    opts.notdef_outline = True
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=[ord(r) for r in " " + RUNES])
    sub.subset(font)
    missing = [r for r in RUNES if ord(r) not in font.getBestCmap()]
    if missing:
        sys.exit("symbols.py: %s has no %s" % (SOURCE, " ".join(missing)))

    ref = noto()
    scale_upem(font, ref["head"].unitsPerEm)
    for k in ("ascent", "descent", "lineGap"):
        setattr(font["hhea"], k, getattr(ref["hhea"], k))
    for k in ("sTypoAscender", "sTypoDescender", "sTypoLineGap", "usWinAscent", "usWinDescent"):
        setattr(font["OS/2"], k, getattr(ref["OS/2"], k))
    use_typo = 1 << 7
    font["OS/2"].fsSelection = (font["OS/2"].fsSelection & ~use_typo) | (ref["OS/2"].fsSelection & use_typo)
    space = font.getBestCmap()[0x20]
    font["hmtx"][space] = (ref["hmtx"][ref.getBestCmap()[0x20]][0], 0)

    names = font["name"]
    for nid, text in ((1, "diffgate symbols"), (2, "Regular"), (3, "diffgate symbols (DejaVu Sans subset)"),
                      (4, "diffgate symbols"), (6, "diffgate-symbols")):
        names.setName(text, nid, 3, 1, 0x409)
    font.save(OUT)
    print("%s: %d bytes, space and %s" % (OUT, os.path.getsize(OUT), RUNES))


main()
