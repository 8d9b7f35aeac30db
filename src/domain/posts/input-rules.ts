import type { ErrorDetail, PostCreateInput } from '../api-types.js';

/**
 * The rules of a create request that a JSON schema cannot say: references between fields, and a
 * schedule in the future. Reported in the same `details` shape as schema failures.
 */
export function findInputProblems(input: PostCreateInput, now: Date): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const targets = new Set(input.accountIds);

  const overridden = new Set<string>();
  (input.accountOverrides ?? []).forEach(({ accountId }, index) => {
    const path = ['accountOverrides', index, 'accountId'];
    if (!targets.has(accountId)) {
      problems.push(notATarget(accountId, path));
    } else if (overridden.has(accountId)) {
      problems.push({
        code: 'not_unique',
        expected: 'one override per account',
        received: accountId,
        path,
        message: `Account ${accountId} already has an override`,
      });
    }
    overridden.add(accountId);
  });

  for (const accountId of Object.keys(input.threadParts ?? {})) {
    if (!targets.has(accountId)) problems.push(notATarget(accountId, ['threadParts', accountId]));
  }

  if (input.scheduledAt !== undefined) {
    const at = new Date(input.scheduledAt);
    if (Number.isNaN(at.getTime())) {
      // The schema's date-time format admits leap seconds (23:59:60), which have no instant to store.
      problems.push({
        code: 'invalid_string',
        expected: 'date-time',
        received: input.scheduledAt,
        path: ['scheduledAt'],
        message: 'scheduledAt is not a representable instant',
      });
    } else if (at.getTime() <= now.getTime()) {
      problems.push({
        code: 'too_small',
        expected: `after ${now.toISOString()}`,
        received: input.scheduledAt,
        path: ['scheduledAt'],
        message: 'scheduledAt must be in the future',
      });
    }
  }
  return problems;
}

function notATarget(accountId: string, path: ErrorDetail['path']): ErrorDetail {
  return {
    code: 'invalid_reference',
    expected: 'one of accountIds',
    received: accountId,
    path,
    message: `Account ${accountId} is not in accountIds`,
  };
}
