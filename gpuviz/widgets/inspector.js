// GraphInspector front end: renders the model's "snapshot" (built by
// gpuviz.widgets.inspector_state.panel_state) into a panel that fits 360 px.
// View-local state (sort column, expanded rows) survives live updates.

const KIND_COLOURS = { compute: '#4e79a7', render: '#f28e2b', copy: '#59a14f', clear: '#b07aa1' }
const colourOf = (kind) => KIND_COLOURS[kind] || '#9c755f'

function el (tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined && text !== null) node.textContent = text
  return node
}

function us (value) {
  if (value === null || value === undefined) return '—'
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1)
}

function bytes (count) {
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let i = 0
  while (count >= 1024 && i < units.length - 1) { count /= 1024; i += 1 }
  return i === 0 ? `${count} B` : `${count.toFixed(1)} ${units[i]}`
}

function share (value) {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(value < 0.1 ? 1 : 0)}%`
}

function header (state) {
  const box = el('div', 'gvi-header')
  const title = el('div', 'gvi-title', state.graph)
  title.title = state.graph
  box.appendChild(title)
  const c = state.compile
  const last = c.last_ms === null ? '' : ` · ${c.last_ms.toFixed(1)} ms`
  box.appendChild(el('div', 'gvi-sub',
    `${state.nodes.length} nodes · ${state.passes.length} passes · compiled ${c.count}×${last} · ` +
    `${state.frames.toLocaleString('en-US')} frames`))
  return box
}

function timeline (state) {
  const basis = state.frame.basis
  const total = basis === 'gpu' ? state.frame.gpu_us : state.frame.cpu_us
  const box = el('div', 'gvi-section')
  const label = basis === 'gpu' ? 'GPU' : 'CPU encode (no GPU timings)'
  box.appendChild(el('div', 'gvi-label', `frame: ${label} ${total ? us(total) + ' µs' : '—'}`))
  const bar = el('div', 'gvi-timeline')
  for (const gpuPass of state.passes) {
    const group = el('div', 'gvi-pass')
    let passTotal = 0
    for (const id of gpuPass.nodes) {
      const node = state.nodes.find(n => n.id === id)
      const value = (node && node[`${basis}_us`]) || 0
      passTotal += value
      const seg = el('div', 'gvi-seg')
      seg.style.flexGrow = String(value)
      seg.style.background = colourOf(gpuPass.kind)
      seg.title = `${id} (pass ${gpuPass.index} · ${gpuPass.kind}): ${us(node && node[`${basis}_us`])} µs`
      group.appendChild(seg)
    }
    group.style.flexGrow = String(total ? passTotal : 1)
    if (total && passTotal === 0) group.style.flexGrow = '0.0001'
    bar.appendChild(group)
  }
  box.appendChild(bar)
  const legend = el('div', 'gvi-legend')
  for (const kind of [...new Set(state.passes.map(p => p.kind))]) {
    const item = el('span', 'gvi-key', kind)
    item.style.setProperty('--gvi-colour', colourOf(kind))
    legend.appendChild(item)
  }
  box.appendChild(legend)
  return box
}

const COLUMNS = [
  { key: 'order', label: 'node', cls: 'gvi-name' },
  { key: 'cpu_us', label: 'CPU µs', cls: 'gvi-num' },
  { key: 'gpu_us', label: 'GPU µs', cls: 'gvi-num' },
  { key: 'share', label: 'share', cls: 'gvi-num gvi-share' }
]

function sortedNodes (nodes, sort) {
  const key = sort.key
  const sign = sort.descending ? -1 : 1
  return [...nodes].sort((a, b) => {
    const x = a[key] === null ? -Infinity : a[key]
    const y = b[key] === null ? -Infinity : b[key]
    return x === y ? a.order - b.order : (x < y ? -1 : 1) * sign
  })
}

function table (state, view, rerender) {
  const t = el('table', 'gvi-table')
  const head = el('tr')
  for (const column of COLUMNS) {
    const th = el('th', column.cls, column.label)
    th.dataset.sort = column.key
    if (view.sort.key === column.key) th.classList.add(view.sort.descending ? 'gvi-desc' : 'gvi-asc')
    th.addEventListener('click', () => {
      const same = view.sort.key === column.key
      view.sort = { key: column.key, descending: same ? !view.sort.descending : column.key !== 'order' }
      rerender()
    })
    head.appendChild(th)
  }
  const thead = el('thead')
  thead.appendChild(head)
  t.appendChild(thead)
  const body = el('tbody')
  for (const node of sortedNodes(state.nodes, view.sort)) {
    const row = el('tr', 'gvi-row')
    row.dataset.node = node.id
    const name = el('td', 'gvi-name')
    const id = el('div', 'gvi-id', node.id)
    id.style.setProperty('--gvi-colour', colourOf(node.kind))
    name.appendChild(id)
    const open = view.expanded.has(node.id)
    name.appendChild(el('div', 'gvi-uses', node.summary))
    if (open) {
      const details = el('div', 'gvi-details')
      details.appendChild(el('div', null, `pass ${node.pass} · ${node.kind}`))
      for (const line of node.uses) details.appendChild(el('div', null, line))
      for (const edge of node.after) details.appendChild(el('div', 'gvi-after', `after ${edge}`))
      name.appendChild(details)
      row.classList.add('gvi-open')
    }
    row.appendChild(name)
    row.appendChild(el('td', 'gvi-num', us(node.cpu_us)))
    row.appendChild(el('td', 'gvi-num', us(node.gpu_us)))
    row.appendChild(el('td', 'gvi-num gvi-share', share(node.share)))
    row.addEventListener('click', () => {
      if (view.expanded.has(node.id)) view.expanded.delete(node.id); else view.expanded.add(node.id)
      rerender()
    })
    body.appendChild(row)
  }
  t.appendChild(body)
  return t
}

function memory (state) {
  const m = state.memory
  const box = el('div', 'gvi-section')
  box.appendChild(el('div', 'gvi-label',
    `transients ${bytes(m.logical)} logical → ${bytes(m.physical)} physical · ${m.reuse_percent.toFixed(0)}% reused`))
  const bar = el('div', 'gvi-memory')
  const fill = el('div', 'gvi-physical')
  fill.style.width = m.logical > 0 ? `${Math.min(100, 100 * m.physical / m.logical)}%` : '0%'
  fill.title = `${m.physical_count} physical buffers for ${m.logical_count} logical transients`
  bar.appendChild(fill)
  box.appendChild(bar)
  box.appendChild(el('div', 'gvi-sub', `imports ${bytes(m.imported)} · ${bytes(m.reused)} saved by reuse`))
  return box
}

function counts (state) {
  const box = el('div', 'gvi-section gvi-counts')
  box.appendChild(el('div', 'gvi-label', 'GPU counts (sampled)'))
  for (const c of state.counts) {
    const line = el('div', 'gvi-count')
    line.appendChild(el('span', 'gvi-count-label', c.label))
    line.appendChild(el('b', null, c.value.toLocaleString('en-US')))
    box.appendChild(line)
  }
  return box
}

function draw (root, state, view) {
  const rerender = () => draw(root, state, view)
  root.replaceChildren()
  if (!state || state.graph === null || state.graph === undefined) {
    root.appendChild(el('div', 'gvi-empty', 'No graph attached.'))
    return
  }
  if (state.destroyed) {
    root.appendChild(el('div', 'gvi-empty', `CompiledGPUCommandGraph "${state.graph}" was destroyed: ` +
      'its plan and resources are gone; attach() a compiled graph to inspect it.'))
    return
  }
  // summaries first, the (long) node table last: a tall graph scrolls only its table out of view
  root.appendChild(header(state))
  root.appendChild(timeline(state))
  root.appendChild(memory(state))
  if (state.counts.length) root.appendChild(counts(state))
  if (state.device_lost) root.appendChild(el('div', 'gvi-lost', `${state.device_lost}: counts are no longer sampled`))
  root.appendChild(table(state, view, rerender))
}

export default {
  render ({ model, el: host }) {
    const root = el('div', 'gpuviz-inspector')
    host.appendChild(root)
    const view = { sort: { key: 'order', descending: false }, expanded: new Set() }
    const update = () => draw(root, model.get('snapshot'), view)
    update()
    model.on('change:snapshot', update)
    return () => { model.off('change:snapshot', update); root.remove() }
  }
}
