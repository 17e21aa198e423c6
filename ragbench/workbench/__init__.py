"""The facade: `Workbench(workspace)` with its areas (library, search, answers, chats, reports,
graph, archive, maintenance) returning the typed models of `results`. Faces import only this.
"""

from ragbench.workbench.facade import Workbench, catalog_failure

__all__ = ["Workbench", "catalog_failure"]
