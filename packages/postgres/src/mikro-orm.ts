export { type MikroOrmBridgeOptions, mikroOrmBridge } from './bridge/mikro-orm-bridge.js';
