// Draws a graph run (`graph` in /api/runs/:id: a layout computed by @cairn/graph, and each node's
// state) as SVG, and the forms that answer its pending approval gates. Ids, labels and conditions
// go in as text nodes; geometry as attributes; classes come from fixed lists, never from the data.
import { formatTime, h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const STATES = new Set(['not-run', 'running', 'waiting', 'waiting-approval', 'succeeded', 'failed']);
const KINDS = new Set(['action', 'workflow', 'event', 'approval', 'sleep', 'forEach']);
const STATE_LABEL = {
  'not-run': 'not run',
  running: 'running',
  waiting: 'waiting',
  'waiting-approval': 'waiting for approval',
  succeeded: 'succeeded',
  failed: 'failed',
};

function svg(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

const shorten = (text, max = 24) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The run's graph as an SVG element: a box per node (coloured by state), an arrow per edge. */
export function drawGraph(graph) {
  const { layout, states } = graph;
  const root = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: layout.width,
    height: layout.height,
    role: 'img',
    'aria-label': 'The run’s graph',
  });
  const defs = svg('defs');
  const marker = svg('marker', { id: 'graph-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'graph-arrowhead' }));
  defs.append(marker);
  root.append(defs);
  for (const edge of layout.edges) {
    const g = svg('g', {
      class: `graph-edge edge-${edge.kind === 'error' ? 'error' : 'flow'}`,
      'data-from': edge.from,
      'data-to': edge.to,
      'data-kind': edge.kind,
    });
    g.append(svg('polyline', { points: edge.points.map((p) => p.join(',')).join(' '), 'marker-end': 'url(#graph-arrow)' }));
    if (edge.label !== undefined) {
      // On the middle segment, a little to the right of it.
      const at = Math.floor((edge.points.length - 1) / 2);
      const [ax, ay] = edge.points[at];
      const [bx, by] = edge.points[at + 1];
      const label = svg('text', { x: (ax + bx) / 2 + 5, y: (ay + by) / 2 + 4, class: 'graph-edge-label' }, shorten(edge.label, 40));
      label.append(svg('title', {}, edge.label));
      g.append(label);
    }
    root.append(g);
  }
  for (const node of layout.nodes) {
    const state = STATES.has(states[node.id]) ? states[node.id] : 'not-run';
    const kind = KINDS.has(node.kind) ? node.kind : 'action';
    const g = svg('g', { class: `graph-node state-${state} kind-${kind}`, 'data-node': node.id, 'data-state': state, 'data-kind': kind });
    g.append(svg('title', {}, `${node.id} · ${node.detail} · ${STATE_LABEL[state]}`));
    g.append(svg('rect', { x: node.x, y: node.y, width: node.width, height: node.height, rx: kind === 'sleep' ? 22 : kind === 'approval' ? 14 : 4 }));
    g.append(svg('text', { x: node.x + node.width / 2, y: node.y + 20, class: 'graph-node-id' }, shorten(node.id)));
    g.append(svg('text', { x: node.x + node.width / 2, y: node.y + 37, class: 'graph-node-detail' }, shorten(`${node.detail} · ${STATE_LABEL[state]}`, 30)));
    root.append(g);
  }
  return root;
}

/** The legend of node states. */
export function graphLegend() {
  return h(
    'ul',
    { class: 'graph-legend' },
    [...STATES].map((state) => h('li', { class: `state-${state}` }, h('span', { class: 'swatch' }), STATE_LABEL[state])),
  );
}

/**
 * A form per pending approval gate: who answers, approve or reject, and the payload (JSON).
 * `submit(node, answer)` sends it; the form shows what the gate takes (approvers, schema, expiry).
 */
export function approvalForms(pending, submit) {
  return pending.map((gate) => {
    const by = h('input', { name: 'by', required: true, 'aria-label': 'Answered by', placeholder: gate.approvers ? gate.approvers.join(' or ') : 'your name' });
    const decision = h(
      'select',
      { name: 'decision', 'aria-label': 'Decision' },
      h('option', { value: 'approve' }, 'approve'),
      h('option', { value: 'reject' }, 'reject'),
    );
    const payload = h('textarea', { name: 'payload', rows: 3, 'aria-label': 'Payload (JSON)', placeholder: '{}' });
    const form = h(
      'form',
      {
        class: 'approval',
        'data-node': gate.node,
        onsubmit: (event) => {
          event.preventDefault();
          submit(gate.node, { by: by.value, decision: decision.value, payloadText: payload.value });
        },
      },
      h('h3', {}, 'Approval: ', h('code', {}, gate.node)),
      h(
        'p',
        { class: 'hint' },
        gate.approvers ? `Approvers: ${gate.approvers.join(', ')}. ` : 'Anyone may answer. ',
        gate.expiresAt !== undefined ? `Expires ${formatTime(gate.expiresAt)}. ` : '',
        gate.schema ? h('span', {}, 'Payload schema: ', h('code', {}, JSON.stringify(gate.schema))) : '',
      ),
      h('label', {}, 'Answered by ', by),
      h('label', {}, 'Decision ', decision),
      h('label', { class: 'payload' }, 'Payload (JSON) ', payload),
      h('div', { class: 'buttons' }, h('button', { type: 'submit', 'data-approve': '' }, 'Send answer')),
    );
    return form;
  });
}
