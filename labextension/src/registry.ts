// The front end's half of the kernel registry: one comm per kernel to the
// target "gpuviz.registry" that gpuviz.widgets.registry registers when it is
// imported. A kernel without gpuviz closes the comm at once; the client then
// waits for the kernel to run something before asking again.

import { Kernel, KernelMessage } from '@jupyterlab/services';

export const TARGET = 'gpuviz.registry';

export interface IWidgetEntry {
  model_id: string;
  kind: string;
  title: string;
  size: number[] | null;
  frames: number | null;
  last_frame_ms: number | null;
  last_frame_source: string | null;
  graphs: string[];
}

export interface IGraphEntry {
  key: string;
  id: string;
  nodes: number;
  passes: number;
  memory_bytes: number;
  logical_bytes: number;
  reuse_percent: number;
  last_frame_ms: number | null;
  last_frame_source: string | null;
  destroyed: boolean;
  inspector_model_id: string | null;
}

export interface ISnapshot {
  widgets: IWidgetEntry[];
  graphs: IGraphEntry[];
}

const TIMEOUT_MS = 10000;

export class RegistryClient {
  constructor(kernel: Kernel.IKernelConnection, hello: Record<string, string>) {
    this._kernel = kernel;
    this._hello = hello;
    kernel.statusChanged.connect((_, status) => {
      if (status === 'busy') {
        this._ranSinceRefusal = true;
      }
    });
  }

  get kernel(): Kernel.IKernelConnection {
    return this._kernel;
  }

  /** False until a kernel accepted the comm; null while unknown. */
  get available(): boolean | null {
    return this._available;
  }

  /** Ask the kernel; rejects on a refused comm, an error reply or a timeout. */
  async request(data: Record<string, unknown>): Promise<Record<string, any>> {
    const comm = this._connect();
    if (comm === null) {
      throw new Error('no gpuviz in this kernel');
    }
    const id = ++this._counter;
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this._pending.delete(id);
        reject(new Error('the kernel did not answer (busy?)'));
      }, TIMEOUT_MS);
      this._pending.set(id, { resolve, reject, timer });
      comm.send({ ...data, id });
    });
  }

  dispose(): void {
    if (this._comm && !this._comm.isDisposed) {
      this._comm.close();
    }
    this._comm = null;
  }

  private _connect(): Kernel.IComm | null {
    if (this._comm !== null && !this._comm.isDisposed) {
      return this._comm;
    }
    if (this._available === false && !this._ranSinceRefusal) {
      return null;
    }
    this._ranSinceRefusal = false;
    const comm = this._kernel.createComm(TARGET);
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => this._onMsg(msg);
    comm.onClose = () => {
      if (this._comm === comm) {
        this._comm = null;
      }
      if (!this._opened) {
        this._available = false;
      }
      for (const [id, pending] of this._pending) {
        window.clearTimeout(pending.timer);
        pending.reject(new Error('no gpuviz in this kernel'));
        this._pending.delete(id);
      }
    };
    comm.open({ request: 'hello', ...this._hello });
    this._comm = comm;
    this._opened = false;
    return comm;
  }

  private _onMsg(msg: KernelMessage.ICommMsgMsg): void {
    const data = msg.content.data as Record<string, any>;
    this._opened = true;
    this._available = true;
    const pending = this._pending.get(data.id);
    if (pending === undefined) {
      return;
    }
    this._pending.delete(data.id);
    window.clearTimeout(pending.timer);
    if (data.error) {
      pending.reject(new Error(String(data.error)));
    } else {
      pending.resolve(data);
    }
  }

  private _kernel: Kernel.IKernelConnection;
  private _hello: Record<string, string>;
  private _comm: Kernel.IComm | null = null;
  private _opened = false;
  private _available: boolean | null = null;
  private _ranSinceRefusal = true;
  private _counter = 0;
  private _pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void; timer: number }>();
}
