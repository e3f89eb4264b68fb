// Opens a live view of a kernel's widget model in the shell: a side panel or
// a main-area split/tab next to the notebook that owns the model. The view
// comes from the notebook's own rendermime (where the widget manager put its
// renderer), so it is a second view of the same model, never a copy.

import { JupyterFrontEnd, ILabShell } from '@jupyterlab/application';
import { NotebookPanel } from '@jupyterlab/notebook';
import { MimeModel } from '@jupyterlab/rendermime';
import { LabIcon } from '@jupyterlab/ui-components';
import { DockLayout, Panel, Widget } from '@lumino/widgets';

export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

export type Where = 'right' | 'split-right' | 'split-bottom' | 'tab';
export const PLACES: Where[] = ['right', 'split-right', 'split-bottom', 'tab'];

export interface IShowRequest {
  model_id: string;
  where: Where;
  title: string;
}

/** What happened to one request: where the view went (after any fallback). */
export interface IShown {
  status: 'opened' | 'activated' | 'missing';
  area: string;
  panelId: string;
}

export const gpuIcon = new LabIcon({
  name: 'gpuviz:gpu',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
    '<g class="jp-icon3" fill="#616161"><rect x="3" y="3" width="10" height="10" rx="1" fill="none" ' +
    'stroke="#616161" stroke-width="1.5"/><rect x="6" y="6" width="4" height="4"/>' +
    '<path d="M5 1h1v2H5zM10 1h1v2h-1zM5 13h1v2H5zM10 13h1v2h-1zM1 5h2v1H1zM1 10h2v1H1zM13 5h2v1h-2z' +
    'M13 10h2v1h-2z"/></g></svg>'
});

function sanitizeId(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

export class Opener {
  constructor(app: JupyterFrontEnd, labShell: ILabShell | null) {
    this._app = app;
    this._labShell = labShell;
  }

  /** True in JupyterLab's shell (main-area splits exist); false in Notebook 7. */
  get hasSplits(): boolean {
    return this._labShell !== null;
  }

  /** Open (or bring forward) a view of ``request.model_id`` of ``notebook``'s kernel. */
  async show(notebook: NotebookPanel, request: IShowRequest): Promise<IShown> {
    const panelId = `gpuviz-show-${sanitizeId(notebook.id)}-${sanitizeId(request.model_id)}-${request.where}`;
    const existing = this._panels.get(panelId);
    if (existing && !existing.isDisposed) {
      this._app.shell.activateById(panelId);
      return { status: 'activated', area: this._areaOf(existing), panelId };
    }
    const renderer = notebook.content.rendermime.createRenderer(WIDGET_MIME);
    const model = new MimeModel({
      data: { [WIDGET_MIME]: { model_id: request.model_id, version_major: 2, version_minor: 0 } }
    });
    await renderer.renderModel(model);
    // The widget manager's renderer adds the view as a child; no child means
    // the model is not live in this kernel (e.g. an output saved earlier).
    if (!(renderer instanceof Panel) || renderer.widgets.length === 0) {
      renderer.dispose();
      return { status: 'missing', area: '', panelId };
    }
    const panel = new Panel();
    panel.id = panelId;
    panel.addClass('gpuviz-ShowPanel');
    panel.node.dataset.gpuvizModel = request.model_id;
    panel.title.label = request.title;
    panel.title.caption = `${request.title} (gpuviz, ${notebook.title.label})`;
    panel.title.icon = gpuIcon;
    panel.title.closable = true;
    panel.addWidget(renderer);
    const area = this._place(panel, notebook, request.where);
    panel.node.dataset.gpuvizArea = area;
    this._panels.set(panelId, panel);
    panel.disposed.connect(() => this._panels.delete(panelId));
    notebook.disposed.connect(() => panel.dispose());
    this._app.shell.activateById(panelId);
    // Views that size themselves from their element (canvases) measure now.
    requestAnimationFrame(() => window.dispatchEvent(new Event('resize')));
    return { status: 'opened', area, panelId };
  }

  /** Add ``panel`` at ``where``, or the nearest place this shell has. */
  private _place(panel: Widget, notebook: NotebookPanel, where: Where): string {
    const shell = this._app.shell;
    if (this._labShell !== null) {
      if (where === 'right') {
        shell.add(panel, 'right', { rank: 1000 });
        return 'right';
      }
      const mode: DockLayout.InsertMode = where === 'tab' ? 'tab-after' : where;
      shell.add(panel, 'main', { mode, ref: notebook.id });
      return 'main';
    }
    // Notebook 7 (one document in its main area): side panels, and a bottom
    // panel for split-bottom; anything the shell refuses goes to the next.
    const order = where === 'split-bottom' ? ['down', 'right', 'left'] : ['right', 'left', 'down'];
    for (const area of order) {
      try {
        shell.add(panel, area as any, { rank: 1000 });
      } catch (error) {
        continue;
      }
      if (Array.from(shell.widgets(area as any)).includes(panel)) {
        return area;
      }
    }
    throw new Error('gpuviz: this shell has no side or bottom panel to show a widget in');
  }

  private _areaOf(panel: Widget): string {
    return panel.node.dataset.gpuvizArea || '';
  }

  private _app: JupyterFrontEnd;
  private _labShell: ILabShell | null;
  private _panels = new Map<string, Widget>();
}
