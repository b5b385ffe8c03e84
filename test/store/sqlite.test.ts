import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helper.js';
import { storeContract } from './store-contract.js';

storeContract('sqlite', async () => {
  const dir = tempDir();
  const store = new SqliteStore(dir.path);
  return {
    store,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});
