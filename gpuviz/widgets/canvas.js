// GPUCanvas front end, appended to jupyter_rfb's renderview module, whose
// default export gpuviz.widgets.canvas renames to `rfbWidget`: every frame,
// event and resize stays jupyter_rfb's; this only adds two overlays.
//   placeholder: model "placeholder" (e.g. "compiling…") until a first frame exists
//   pending:     model "pending", set by the kernel when a frame takes longer than ~300 ms
// and confirms frames itself (see _FEEDBACK in canvas.py): ipywidgets would send the next
// model update only after the kernel answered the last one, and the kernel echoed each one.
// A confirmation rides on the next event sent within FEEDBACK_DELAY_MS (while the pointer
// drags, events flow every ~20 ms), else it goes alone. It also says when the frame
// arrived ("received"): every arrival pushes the frame and then calls
// _request_animation_frame, which stamps the newest frame once.
const FEEDBACK_DELAY_MS = 15
const rfbOnEvent = RendercanvasAnywidgetModel.prototype.onEvent
const rfbRequestAnimationFrame = RendercanvasAnywidgetModel.prototype._request_animation_frame
RendercanvasAnywidgetModel.prototype._send_response = function () {
  const frame = this._lastFrame
  this._gpuvizAck = {
    index: frame.index,
    timestamp: frame.timestamp,
    localtime: Date.now() / 1000,
    received: frame.gpuvizReceived ?? null
  }
  if (!this._gpuvizAckTimer) {
    this._gpuvizAckTimer = setTimeout(() => {
      this._gpuvizAckTimer = null
      const ack = this._gpuvizAck
      this._gpuvizAck = null
      if (ack) rfbOnEvent.call(this, { type: 'gpuviz_frame_feedback', ...ack })
    }, FEEDBACK_DELAY_MS)
  }
}
RendercanvasAnywidgetModel.prototype.onEvent = function (event) {
  if (this._gpuvizAck && event.type !== 'close') {
    event = { ...event, gpuviz_feedback: this._gpuvizAck }
    this._gpuvizAck = null
  }
  return rfbOnEvent.call(this, event)
}
RendercanvasAnywidgetModel.prototype._request_animation_frame = function () {
  const newest = this._frames[this._frames.length - 1]
  if (newest && newest.gpuvizReceived === undefined) newest.gpuvizReceived = Date.now() / 1000
  return rfbRequestAnimationFrame.call(this)
}

export default () => {
  const inner = rfbWidget()
  return {
    initialize (ctx) {
      return inner.initialize(ctx)
    },
    render (ctx) {
      const cleanup = inner.render(ctx)
      const wrapper = ctx.el.querySelector('.renderview-wrapper') || ctx.el
      wrapper.classList.add('gpuviz-canvas')
      const placeholder = document.createElement('div')
      placeholder.className = 'gpuviz-canvas-placeholder'
      const pending = document.createElement('div')
      pending.className = 'gpuviz-canvas-pending'
      pending.title = 'a frame is on its way'
      wrapper.appendChild(placeholder)
      wrapper.appendChild(pending)
      const sync = () => {
        const text = ctx.model.get('placeholder') || ''
        placeholder.textContent = text
        placeholder.style.display = text ? '' : 'none'
        pending.style.display = ctx.model.get('pending') ? '' : 'none'
        wrapper.dataset.renderScale = String(ctx.model.get('render_scale'))
      }
      sync()
      ctx.model.on('change:placeholder', sync)
      ctx.model.on('change:pending', sync)
      ctx.model.on('change:render_scale', sync)
      return () => {
        ctx.model.off('change:placeholder', sync)
        ctx.model.off('change:pending', sync)
        ctx.model.off('change:render_scale', sync)
        placeholder.remove()
        pending.remove()
        if (cleanup) cleanup()
      }
    }
  }
}
