export { type TypeormBridgeOptions, type TypeormDb, typeormBridge } from './bridge/typeorm-bridge.js';
