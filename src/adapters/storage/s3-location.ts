/** A bucket of an S3-compatible store, and the key prefix Herald's objects go under ('' for none). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/**
 * `s3://bucket` or `s3://bucket/prefix`, with S3's bucket naming rules and a prefix of S3's safe key
 * characters only (a trailing slash is dropped); undefined for anything else. Kept apart from the
 * storage so reading the configuration does not load the AWS SDK.
 */
export function s3LocationOf(url: string): S3Location | undefined {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/([\w!.*'()/-]*))?$/.exec(url);
  const bucket = match?.[1];
  if (bucket === undefined) return undefined;
  const prefix = (match?.[2] ?? '').replace(/\/+$/, '');
  // Empty or dot segments name keys that some stores normalise into other keys.
  if (prefix !== '' && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
  return { bucket, prefix };
}
