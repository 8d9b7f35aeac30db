import { describe, expect, it } from 'vitest';
import { loadSpecification } from '../../src/api/contract/specification.js';
import { credentialFields, credentialPlatforms, LIVE_PLATFORMS } from '../../src/domain/platforms/live.js';

// The drift check between the live platforms' descriptors and the spec a client codes against.
describe('the live platforms as the spec describes them', () => {
  it('AccountCredentials has exactly the credentials the descriptors take', async () => {
    const schemas = ((await loadSpecification()).document as { components?: { schemas?: unknown } }).components?.schemas as Record<
      string,
      { properties?: Record<string, unknown>; description?: string }
    >;
    const documented = schemas.AccountCredentials;
    expect(Object.keys(documented?.properties ?? {}).sort()).toEqual(
      credentialFields()
        .map((field) => field.key)
        .sort(),
    );
    for (const platform of credentialPlatforms()) {
      for (const field of platform.credentials) expect(documented?.description, `${platform.id}.${field.key}`).toContain(`\`${field.key}\``);
    }
  });

  it('every live platform is one a client can name when connecting', async () => {
    const schemas = ((await loadSpecification()).document as { components?: { schemas?: unknown } }).components?.schemas as Record<
      string,
      { properties?: Record<string, { enum?: string[] }> }
    >;
    const platforms = schemas.AccountConnectInput?.properties?.platform?.enum ?? [];
    for (const platform of LIVE_PLATFORMS) expect(platforms).toContain(platform.id);
  });
});
