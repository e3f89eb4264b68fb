// The renderer of gpuviz.show's output: opens the requested panel once, and
// stays in the cell as one line naming where the widget went, with a button
// to bring it back. Hosts without this extension render the bundle's
// widget-view (the widget inline, with a note) or its text instead.

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { IShowRequest, Opener, PLACES, Where } from './opener';

export const SHOW_MIME = 'application/vnd.gpuviz.show+json';

interface IShowData {
  model_id: string;
  where: string;
  title: string;
  show_id: string;
}

const MAIN_PLACES: Record<string, string> = {
  'split-right': 'a split right of the notebook',
  'split-bottom': 'a split below the notebook',
  tab: 'a tab beside the notebook',
  right: 'the right panel'
};

/** Show ids whose panel this page already opened (re-rendering an output, e.g. a
 * second view of it, must not open the panel again). */
const handled = new Set<string>();

export class ShowRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(opener: Opener, tracker: INotebookTracker) {
    super();
    this._opener = opener;
    this._tracker = tracker;
    this.addClass('gpuviz-ShowLink');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[SHOW_MIME] as unknown as IShowData;
    const where = (PLACES as string[]).includes(data.where) ? (data.where as Where) : 'right';
    this._request = { model_id: String(data.model_id), where, title: String(data.title || 'gpuviz') };
    this._showId = String(data.show_id || data.model_id);
    this.node.dataset.gpuvizModel = this._request.model_id;
    this._line('opening…');
    if (this.isAttached) {
      await this._open(false);
    }
  }

  protected onAfterAttach(): void {
    void this._open(false);
  }

  private _notebook(): NotebookPanel | null {
    const owner = this._tracker.find(panel => panel.node.contains(this.node));
    return owner ?? this._tracker.currentWidget;
  }

  private async _open(again: boolean): Promise<void> {
    const request = this._request;
    if (request === null || (!again && handled.has(this._showId))) {
      if (request !== null && this.node.dataset.gpuvizStatus === undefined) {
        this._line('shown in a panel', 'shown');
      }
      return;
    }
    handled.add(this._showId);
    const notebook = this._notebook();
    if (notebook === null) {
      this._line('no notebook owns this output', 'missing');
      return;
    }
    try {
      const shown = await this._opener.show(notebook, request);
      if (shown.status === 'missing') {
        this._line('the widget is not live in this kernel (run the cell again)', 'missing');
        return;
      }
      const place = shown.area === 'main' ? MAIN_PLACES[request.where] : `the ${shown.area} panel`;
      const note = shown.area === 'main' || shown.area === request.where ? '' : ` (no ${request.where} here)`;
      this._line(`shown in ${place}${note}`, 'shown');
    } catch (error) {
      this._line(`could not open a panel: ${error}`, 'error');
    }
  }

  private _line(text: string, status?: string): void {
    const request = this._request;
    this.node.textContent = '';
    const label = document.createElement('span');
    label.textContent = `gpuviz: ${request ? request.title : ''} ${text}`;
    this.node.appendChild(label);
    if (status !== undefined) {
      this.node.dataset.gpuvizStatus = status;
      const button = document.createElement('button');
      button.textContent = 'show';
      button.title = 'Open or bring forward the panel';
      button.onclick = () => void this._open(true);
      this.node.appendChild(button);
    }
  }

  private _opener: Opener;
  private _tracker: INotebookTracker;
  private _request: IShowRequest | null = null;
  private _showId = '';
}
