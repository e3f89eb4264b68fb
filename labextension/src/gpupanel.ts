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

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
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
    tracker.currentChanged.connect(() => {
      if (this.isVisible) {
        void this.refresh(true);
      }
    });
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
      this._section('Widgets', snapshot.widgets, w => this._widgetItem(w, notebook)),
      this._section('Compiled graphs', snapshot.graphs, g => this._graphItem(g, notebook))
    );
  }

  private _section<T>(heading: string, entries: T[], item: (entry: T) => HTMLElement): HTMLElement {
    const section = document.createElement('section');
    const h = document.createElement('h3');
    h.textContent = `${heading} (${entries.length})`;
    section.append(h, ...entries.map(item));
    return section;
  }

  /** One entry: a head line (name, kind, open button) and a line of facts. */
  private _item(name: string, kind: string, facts: string[], open: () => void): HTMLElement {
    const item = document.createElement('div');
    item.className = 'gpuviz-item';
    const head = document.createElement('div');
    const label = document.createElement('b');
    label.textContent = name;
    head.append(label);
    if (kind) {
      const span = document.createElement('span');
      span.className = 'gpuviz-kind';
      span.textContent = ` ${kind}`;
      head.append(span);
    }
    const button = document.createElement('button');
    button.textContent = 'open';
    button.onclick = open;
    head.append(button);
    const meta = document.createElement('div');
    meta.className = 'gpuviz-meta';
    meta.textContent = facts.join(' · ');
    item.append(head, meta);
    return item;
  }

  private _widgetItem(entry: IWidgetEntry, notebook: NotebookPanel): HTMLElement {
    const facts = [`id ${entry.model_id.slice(0, 8)}`];
    if (entry.size) {
      facts.push(`${entry.size.join('×')} px`);
    }
    if (entry.frames !== null) {
      facts.push(plural(entry.frames, 'frame'));
    }
    facts.push(`last frame ${ms(entry.last_frame_ms, entry.last_frame_source)}`);
    if (entry.graphs.length) {
      facts.push(`graph ${entry.graphs.join(', ')}`);
    }
    const title = entry.title || entry.kind;
    const item = this._item(title, title === entry.kind ? '' : entry.kind, facts,
      () => void this._show(notebook, entry.model_id, title));
    item.dataset.gpuvizModel = entry.model_id;
    return item;
  }

  private _graphItem(entry: IGraphEntry, notebook: NotebookPanel): HTMLElement {
    const facts = [
      plural(entry.nodes, 'node'),
      plural(entry.passes, 'pass', 'passes'),
      `${bytes(entry.memory_bytes)} transient (${bytes(entry.logical_bytes)} logical, ` +
        `${entry.reuse_percent.toFixed(0)}% reused)`,
      `last frame ${ms(entry.last_frame_ms, entry.last_frame_source)}`
    ];
    const item = this._item(entry.id, entry.destroyed ? 'destroyed' : '', facts, async () => {
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
    item.dataset.gpuvizGraph = entry.id;
    return item;
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
