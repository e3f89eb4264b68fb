// gpuviz's JupyterLab / Notebook 7 extension: renders gpuviz.show() outputs
// as panels (side panels, main-area splits and tabs) and adds the "GPU" side
// panel listing the kernel's live gpuviz widgets and compiled graphs.

import { ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { GpuPanel } from './gpupanel';
import { Opener } from './opener';
import { SHOW_MIME, ShowRenderer } from './showrenderer';

export const VERSION = '0.1.0';

/** Before the widget manager's renderer (rank -10): where both are known, the panel wins. */
const SHOW_RANK = -20;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'gpuviz:plugin',
  description: 'gpuviz.show panels and the GPU side panel',
  autoStart: true,
  requires: [IRenderMimeRegistry, INotebookTracker],
  optional: [ILabShell],
  activate: (app: JupyterFrontEnd, rendermime: IRenderMimeRegistry, tracker: INotebookTracker,
    labShell: ILabShell | null) => {
    const opener = new Opener(app, labShell);
    rendermime.addFactory(
      { safe: false, mimeTypes: [SHOW_MIME], createRenderer: () => new ShowRenderer(opener, tracker) },
      SHOW_RANK
    );
    const hello = { app: app.name, app_version: app.version, extension_version: VERSION };
    const panel = new GpuPanel(opener, tracker, hello);
    app.shell.add(panel, 'left', { rank: 900 });
    document.body.dataset.gpuvizExtension = VERSION;
  }
};

export default plugin;
