// The floor: every export of lit and of the decorators the elements use and @lit/task's Task,
// re-exported so that tree-shaking keeps all of it. No Lit-based element that runs tasks can
// ship less than this. (Reading a user token's claims is a few lines of the elements' own code.)

export { Task, TaskStatus } from '@lit/task';
export * from 'lit';
export { customElement, property, query, state } from 'lit/decorators.js';
