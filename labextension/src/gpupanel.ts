// The "GPU" side panel: the current notebook's kernel's live gpuviz widgets
// and compiled graphs, refreshed every couple of seconds while the panel is
// visible and the kernel idle; "open" shows any of them beside the notebook.

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { gpuIcon, Opener } from './opener';
import { IGraphEntry, ISnapshot, IWidgetEntry, RegistryClient } from './registry';

const REFRESH_MS = 2000;

function ms(value: number | null, source: string | null): string {
  if (value === null || value === undefined) {
    return '—';
  }
  return `${value.toFixed(value < 10 ? 2 : 1)} ms` + (source ? ` (${source})` : '');
}

function bytes(count: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function cell(row: HTMLTableRowElement, text: string, numeric = false): void {
  const td = row.insertCell();
  td.textContent = text;
  if (numeric) {
    td.className = 'gpuviz-num';
  }
}

export class GpuPanel extends Widget {
  constructor(opener: Opener, tracker: INotebookTracker, hello: Record<string, string>) {
    super();
    this._opener = opener;
    this._tracker = tracker;
    this._hello = hello;
    this.id = 'gpuviz-gpu-panel';
    this.addClass('gpuviz-GpuPanel');
    this.title.icon = gpuIcon;
    this.title.caption = 'GPU: live gpuviz widgets and compiled graphs of this notebook\'s kernel';
    this.title.label = 'GPU';
    const header = document.createElement('div');
    const refresh = document.createElement('button');
    refresh.textContent = 'refresh';
    refresh.onclick = () => void this.refresh(true);
    const title = document.createElement('b');
    title.textContent = 'GPU';
    header.append(title, refresh);
    this._status = document.createElement('div');
    this._status.className = 'gpuviz-status';
    this._body = document.createElement('div');
    this.node.append(header, this._status, this._body);
    tracker.currentChanged.connect(() => void this.refresh(true));
  }

  protected onAfterShow(): void {
    void this.refresh(true);
    this._timer = window.setInterval(() => void this.refresh(false), REFRESH_MS);
  }

  protected onBeforeHide(): void {
    window.clearInterval(this._timer);
  }

  protected onAfterAttach(): void {
    if (this.isVisible && this._timer === 0) {
      this.onAfterShow();
    }
  }

  protected onBeforeDetach(): void {
    window.clearInterval(this._timer);
    this._timer = 0;
  }

  /** Ask the current kernel for its registry (skipped while it is busy unless ``force``). */
  async refresh(force: boolean): Promise<void> {
    const notebook = this._tracker.currentWidget;
    const kernel = notebook?.sessionContext.session?.kernel ?? null;
    if (notebook === null || kernel === null) {
      this._setStatus('No notebook kernel.');
      this._render(null, null);
      return;
    }
    if (this._busy || (!force && kernel.status !== 'idle')) {
      return;
    }
    const client = this._client(kernel);
    this._busy = true;
    try {
      const snapshot = (await client.request({ request: 'list' })) as unknown as ISnapshot;
      this._setStatus(`${notebook.title.label}: ${snapshot.widgets.length} widgets, ${snapshot.graphs.length} graphs`);
      this._render(notebook, snapshot);
    } catch (error) {
      this._setStatus(`${notebook.title.label}: ${(error as Error).message}.`);
      this._render(null, null);
    } finally {
      this._busy = false;
    }
  }

  private _client(kernel: NonNullable<NotebookPanel['sessionContext']['session']>['kernel']): RegistryClient {
    let client = this._clients.get(kernel!.id);
    if (client === undefined || client.kernel !== kernel) {
      client = new RegistryClient(kernel!, this._hello);
      this._clients.set(kernel!.id, client);
      kernel!.disposed.connect(() => this._clients.delete(kernel!.id));
    }
    return client;
  }

  private _setStatus(text: string): void {
    this._status.textContent = text;
  }

  private _render(notebook: NotebookPanel | null, snapshot: ISnapshot | null): void {
    this._body.textContent = '';
    if (notebook === null || snapshot === null) {
      return;
    }
    this._body.append(
      this._table('Widgets', ['kind', 'id', 'size', 'frames', 'last frame', ''], snapshot.widgets, (row, w) =>
        this._widgetRow(row, w, notebook)
      ),
      this._table('Compiled graphs', ['id', 'nodes', 'passes', 'memory', 'last frame', ''], snapshot.graphs,
        (row, g) => this._graphRow(row, g, notebook))
    );
  }

  private _table<T>(heading: string, columns: string[], entries: T[],
    fill: (row: HTMLTableRowElement, entry: T) => void): HTMLElement {
    const section = document.createElement('section');
    const h = document.createElement('h3');
    h.textContent = heading;
    const table = document.createElement('table');
    const head = table.createTHead().insertRow();
    for (const name of columns) {
      const th = document.createElement('th');
      th.textContent = name;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const entry of entries) {
      fill(body.insertRow(), entry);
    }
    section.append(h, table);
    return section;
  }

  private _widgetRow(row: HTMLTableRowElement, entry: IWidgetEntry, notebook: NotebookPanel): void {
    row.dataset.gpuvizModel = entry.model_id;
    cell(row, entry.title && entry.title !== entry.kind ? `${entry.kind} · ${entry.title}` : entry.kind);
    cell(row, entry.model_id.slice(0, 8));
    cell(row, entry.size ? entry.size.join('×') : '—', true);
    cell(row, entry.frames === null ? '—' : String(entry.frames), true);
    cell(row, ms(entry.last_frame_ms, entry.last_frame_source), true);
    this._openButton(row, () => this._show(notebook, entry.model_id, entry.title || entry.kind));
  }

  private _graphRow(row: HTMLTableRowElement, entry: IGraphEntry, notebook: NotebookPanel): void {
    row.dataset.gpuvizGraph = entry.id;
    cell(row, entry.id + (entry.destroyed ? ' (destroyed)' : ''));
    cell(row, String(entry.nodes), true);
    cell(row, String(entry.passes), true);
    const memory = cell(row, bytes(entry.memory_bytes), true);
    void memory;
    row.cells[row.cells.length - 1].title =
      `physical transients ${bytes(entry.memory_bytes)}, logical ${bytes(entry.logical_bytes)}, ` +
      `reuse ${entry.reuse_percent.toFixed(0)}%`;
    cell(row, ms(entry.last_frame_ms, entry.last_frame_source), true);
    this._openButton(row, async () => {
      const client = this._clients.get(notebook.sessionContext.session!.kernel!.id);
      if (client === undefined) {
        return;
      }
      try {
        const reply = await client.request({ request: 'open', key: entry.key });
        await this._show(notebook, reply.model_id, reply.title);
      } catch (error) {
        this._setStatus(`open ${entry.id}: ${(error as Error).message}`);
      }
    });
  }

  private _openButton(row: HTMLTableRowElement, open: () => void): void {
    const button = document.createElement('button');
    button.textContent = 'open';
    button.onclick = open;
    row.insertCell().appendChild(button);
  }

  private async _show(notebook: NotebookPanel, modelId: string, title: string): Promise<void> {
    const where = this._opener.hasSplits ? 'split-right' : 'right';
    const shown = await this._opener.show(notebook, { model_id: modelId, where, title });
    if (shown.status === 'missing') {
      this._setStatus(`${title}: not live in this kernel any more`);
    }
  }

  private _opener: Opener;
  private _tracker: INotebookTracker;
  private _hello: Record<string, string>;
  private _clients = new Map<string, RegistryClient>();
  private _status: HTMLElement;
  private _body: HTMLElement;
  private _timer = 0;
  private _busy = false;
}
