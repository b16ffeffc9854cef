// The floor: every export of lit and of the decorators the elements use, @lit/task's Task and
// jose's decodeJwt, re-exported so that tree-shaking keeps all of it. No Lit-based element that
// runs tasks and reads a user token can ship less than this.

export { Task, TaskStatus } from '@lit/task';
export { decodeJwt } from 'jose';
export * from 'lit';
export { customElement, property, query, state } from 'lit/decorators.js';
