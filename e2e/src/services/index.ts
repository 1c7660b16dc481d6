export {
  URL_ENV,
  parseProvider,
  parseRequire,
  startService,
  stopSharedServices,
  useMongodb,
  useMysql,
  usePostgres,
  useRedis,
  useService,
} from './provider.js';
export {
  createMysqlDatabase,
  createPostgresDatabase,
  createPostgresSchema,
  deleteRedisPrefix,
  dropMongoDatabase,
  dropMysqlDatabase,
  dropPostgresDatabase,
  freshMongoDatabaseName,
  freshRedisPrefix,
  uniqueName,
} from './namespaces.js';
export { redactUrl, summarize, summaryLine } from './summary.js';
export { DEFAULT_IMAGES, probeContainerRuntime } from './testcontainers.js';
export { stopAllLocalServers } from './local/process.js';
export {
  SERVICE_NAMES,
  ServiceUnavailableError,
  type ProviderMode,
  type RunningService,
  type ServiceName,
  type ServiceOptions,
  type ServiceResult,
  type ServiceSource,
  type SkippedService,
} from './types.js';
