"""Synthesis studio: reports (roadmaps, essays, briefs, custom outlines) whose every part
carries the references that shaped it (specs/000 and specs/002).

`templates` gives a report its outline; `context` gathers each part's passages (lens-balanced
+ graph-expanded, context grouped by lens with contradiction warnings); `generator` writes a
part with a chat model or as an extractive `digest`, validates its citations and evaluates its
references; `service` creates, writes, tunes and reshapes reports; `store` keeps them in the
catalog (schema revision s0003); `exports` writes Markdown, DOCX, JSON and the `.essay` shape.
The facade (`ragbench.workbench.presentation`) names what faces read, from those modules.
"""
