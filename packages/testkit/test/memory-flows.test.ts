import { type MemoryFlowTx, type MemoryStore, manualClock } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { runFlowConformance } from '../src/index.js';
import { memoryFlowOptions } from './memory-flow-options.js';

runFlowConformance<MemoryStore, MemoryFlowTx>({ describe, it, expect }, memoryFlowOptions('memory store (manual clock)', manualClock(Date.UTC(2026, 0, 1))));
