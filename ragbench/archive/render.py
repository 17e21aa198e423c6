"""An archive view as inert HTML: the document's layout shows, nothing in it can fetch or run.

Archive views are Markdown, and a Markdown original keeps its author's syntax. Rendered by
Streamlit's Markdown, that syntax is live: titled and reference-style images load from any
host (a read receipt for whoever wrote the document), autolinks and titled links stay
clickable, and Streamlit's own extensions (`:red[...]`, `$...$`, `:material/...:`) render.
Rewriting link targets with a regular expression cannot close all of these.

So the view is parsed with markdown-it-py (CommonMark + tables, raw HTML off, so any HTML
in a document is escaped as text) and rendered to HTML with three rules replaced:

- an image becomes its alt text in brackets (`[image: alt]`); nothing is fetched;
- a link to another host or scheme (`http:`, `mailto:`, `javascript:`...) and every autolink
  lose their target and keep their label as text;
- a relative link is resolved against the view's archive URI and becomes the target the caller
  gives for it (for example `?doc=<id>` on the Archive page), or text when there is none.

The HTML contains only tags markdown-it emits for layout; every character of the document
is escaped by it. Streamlit's `st.html` (DOMPurify) is a second guard, not the first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ragbench.archive.paths import URI_SCHEME, normalize_uri

_DROPPED = "_ragbench_dropped_links"
STYLE = (
    "<style>.rb-view table{border-collapse:collapse}.rb-view td,.rb-view th{border:1px solid "
    "rgba(128,128,128,.35);padding:2px 6px}.rb-view .rb-image{opacity:.7;font-style:italic}"
    ".rb-view mark{background:rgba(255,200,0,.35)}</style>"
)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    return md


def view_html(markdown: str, base_uri: str, target_for: Callable[[str], str | None]) -> str:
    """`markdown` (an archive view at `base_uri`) as inert HTML (see the module doc).

    `target_for(archive_uri)` maps a relative link's resolved archive URI to the href to use,
    or None to keep the label as plain text.
    """
    md = _parser()
    base = PurePosixPath(base_uri).parent

    def image(renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict,
                 env: EnvType) -> str:
        alt = renderer.renderInlineAsText(tokens[idx].children or [], options, env)
        label = f"[image: {alt}]" if alt.strip() else "[image]"
        return f'<span class="rb-image">{_escape(label)}</span>'

    def link_open(renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict,
                     env: EnvType) -> str:
        token = tokens[idx]
        href = str(token.attrs.get("href") or "")
        target = None
        if token.markup != "autolink" and href and not URI_SCHEME.match(href) \
                and not href.startswith("//"):
            path = href.split("#", 1)[0]
            uri = normalize_uri(base / unquote(path)) if path else None
            target = target_for(uri) if uri else None
        stack: list[bool] = env.setdefault(_DROPPED, [])
        stack.append(target is None)
        if target is None:
            return ""
        return f'<a href="{_escape(target)}" target="_self">'

    def link_close(renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict,
                      env: EnvType) -> str:
        stack: list[bool] = env.setdefault(_DROPPED, [])
        dropped = stack.pop() if stack else True
        return "" if dropped else "</a>"

    md.add_render_rule("image", image)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    env: dict[str, Any] = {}
    return f'{STYLE}<div class="rb-view">{md.render(markdown, env)}</div>'


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
