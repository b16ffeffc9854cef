import type { Static, TSchema } from '@sinclair/typebox';
import type * as Client from 'forge-embed/client';
import type * as Schemas from './schemas.js';

/**
 * The wire shapes are written twice on purpose: as TypeBox schemas here in the service (they
 * validate, and make the OpenAPI document), and as plain interfaces in `forge-embed/client`
 * (src/api/types.ts), which the browser package publishes without depending on the service.
 * This module holds the two equal at compile time: `npm run typecheck` and the service's build
 * fail when a field is added, dropped, renamed or retyped on one side only, and the error
 * points at the line of the shape that differs.
 *
 * Equal here means: each is assignable to the other, and every object in them has the same
 * field names on both sides (so a field that is optional on one side only is a difference too),
 * except an object open to any field (`Record<string, …>`, an open `parameters`). `any` on the
 * client's side never counts as equal.
 */
type Agree<Schema extends TSchema, ClientType> = 0 extends 1 & ClientType ? false : Same<Static<Schema>, ClientType>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? SameFields<NonNullable<A>, NonNullable<B>> : false) : false;

/**
 * The same field names, all the way down: arrays by their items, objects field by field (an
 * optional or nullable one by what it holds), a union of several objects as a whole.
 */
type SameFields<A, B> = [A] extends [readonly (infer ItemA)[]]
  ? [B] extends [readonly (infer ItemB)[]]
    ? Same<ItemA, ItemB>
    : false
  : [A] extends [object]
    ? [B] extends [object]
      ? string extends keyof A | keyof B
        ? true
        : [keyof A] extends [keyof B]
          ? [keyof B] extends [keyof A]
            ? false extends { [K in keyof A & keyof B]-?: Same<A[K], B[K]> }[keyof A & keyof B]
              ? false
              : true
            : false
          : false
      : false
    : true;

/** Fails to compile ("Type 'false' does not satisfy the constraint 'true'") where two shapes differ. */
type Holds<T extends true> = T;

export type WireShapesAgree = [
  Holds<Agree<typeof Schemas.FieldErrorSchema, Client.FieldError>>,
  Holds<Agree<typeof Schemas.ProblemSchema, Client.ProblemDocument>>,
  Holds<Agree<typeof Schemas.IntegrationSchema, Client.Integration>>,
  Holds<Agree<typeof Schemas.BlockSchema, Client.Block>>,
  Holds<Agree<typeof Schemas.ParentWorkflowSchema, Client.ParentWorkflow>>,
  Holds<Agree<typeof Schemas.WorkflowSummariesSchema, Client.WorkflowSummaries>>,
  Holds<Agree<typeof Schemas.ChildWorkflowSchema, Client.ChildWorkflow>>,
  Holds<Agree<typeof Schemas.UserSchema, Client.User>>,
  Holds<Agree<typeof Schemas.UserWithWorkflowsSchema, Client.UserWithWorkflows>>,
  Holds<Agree<typeof Schemas.ExecutionLogEntrySchema, Client.ExecutionLogEntry>>,
  Holds<Agree<typeof Schemas.ErrorLogEntrySchema, Client.ErrorLogEntry>>,
  Holds<Agree<typeof Schemas.WorkflowHealthSchema, Client.WorkflowHealth>>,
  Holds<Agree<typeof Schemas.ConnectedIntegrationSchema, Client.ConnectedIntegration>>,
  Holds<Agree<typeof Schemas.UserConnectionSchema, Client.UserConnection>>,
  Holds<Agree<typeof Schemas.DisconnectedSchema, Client.Disconnected>>,
  Holds<Agree<typeof Schemas.SetupSchema, Client.Setup>>,
  Holds<Agree<typeof Schemas.HostSettingsSchema, Client.HostSettings>>,
  Holds<Agree<typeof Schemas.HostSettingsUpdateSchema, Client.HostSettingsUpdate>>,
  Holds<Agree<typeof Schemas.InstallResponseSchema, Client.InstallResponse>>,
  Holds<Agree<typeof Schemas.SetVariablesResponseSchema, Client.SetVariablesResponse>>,
  Holds<Agree<typeof Schemas.OAuthStartSchema, Client.OAuthStart>>,
];
